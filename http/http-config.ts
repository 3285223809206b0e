import { isIP } from 'node:net';
import { z } from 'zod';
import { defineSettings } from '../ledger/config.ts';

/** proxy-addr's names for address ranges, as fastify's `trustProxy` takes them. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address, a CIDR range or a named range (`loopback`…): what one entry of TRUST_PROXY may be. */
const isProxyEntry = (entry: string): boolean => {
  if (NAMED_RANGES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d+$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
};

/**
 * Which proxies' `X-Forwarded-For` names the client (its address keys the unverified webhook budget and is recorded as
 * the actor's): a number of hops, or proxies' addresses, CIDR ranges and named ranges; unset, none (the socket's peer).
 */
export const trustProxySetting = z
  .string()
  .trim()
  .optional()
  .transform((value, ctx): number | string | undefined => {
    if (!value) return undefined;
    if (/^\d+$/.test(value) && Number(value) >= 1) return Number(value);
    const entries = value.split(',').map((entry) => entry.trim());
    if (entries.every(isProxyEntry)) return entries.join(',');
    ctx.addIssue({
      code: 'custom',
      message: 'a number of hops, or addresses, CIDR ranges and loopback/linklocal/uniquelocal, comma-separated',
    });
    return z.NEVER;
  });

/** The HTTP edge's settings: authentication, the body limit, the proxies it trusts, the OAuth state's key. */
export const httpSettings = defineSettings(
  {
    AUTH_JWKS_URL: z.string().url().optional(),
    AUTH_ISSUER: z.string().optional(),
    AUTH_AUDIENCE: z.string().optional(),
    AUTH_DEV_SECRET: z.string().min(16).optional(),
    BODY_LIMIT_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
    TRUST_PROXY: trustProxySetting,
    /**
     * Deliveries to POST /unified/webhook this instance has seen into the inbox, kept so that a redelivery of one is
     * answered a duplicate without a command (the most recent kept; a redelivery of an older one goes to the inbox).
     */
    WEBHOOK_RECENT_DELIVERIES: z.coerce.number().int().min(1).default(50_000),
    /** Signs the OAuth `state`; a random one per process when unset (states then do not survive a restart). */
    INTEGRATION_STATE_SECRET: z.string().min(16).optional(),
  },
  ['AUTH_DEV_SECRET', 'INTEGRATION_STATE_SECRET'],
);
