import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Logger } from '../ledger/logger.ts';

/**
 * The OAuth `state` the service hands the connection provider and gets back with the new connection:
 * `base64url(payload JSON).base64url(HMAC-SHA256 of the first part)`. The payload names who asked (tenant, org,
 * user), for which category, a random nonce (two states are never equal) and an expiry; the MAC, keyed with
 * INTEGRATION_STATE_SECRET, makes it unforgeable. The state is not secret (anyone holding it can read it), only
 * authentic, so it carries nothing beyond ids.
 */
export const STATE_TTL_MS = 15 * 60 * 1000;
const MAX_STATE_CHARS = 2048;

export type StateCategory = 'commerce' | 'accounting';

export type OAuthState = {
  tenantId: string;
  orgId: string;
  userId: string;
  category: StateCategory;
  nonce: string;
  /** Epoch milliseconds after which the state is refused. */
  expiresAt: number;
};

export type StateClaims = Pick<OAuthState, 'tenantId' | 'orgId' | 'userId' | 'category'>;

/** Why a state was refused: not a state at all, not signed with our secret, or too old. */
export type StateProblem = 'malformed' | 'forged' | 'expired';
export type StateVerification = { ok: true; state: OAuthState } | { ok: false; problem: StateProblem };

const payloadSchema = z
  .object({
    tenantId: z.string().min(1).max(64),
    orgId: z.string().min(1).max(64),
    userId: z.string().min(1).max(64),
    category: z.enum(['commerce', 'accounting']),
    nonce: z.string().min(16).max(64),
    expiresAt: z.number().int().positive(),
  })
  .strict();

const BASE64URL = /^[A-Za-z0-9_-]+$/;

export class OAuthStateSigner {
  private readonly key: Buffer;

  constructor(secret: string | Buffer) {
    this.key = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
    if (this.key.length < 16) throw new Error('the OAuth state secret must be at least 16 bytes');
  }

  /** `now`: epoch milliseconds; the state is valid until `now + ttlMs`. */
  sign(claims: StateClaims, now: number = Date.now(), ttlMs: number = STATE_TTL_MS): string {
    const state: OAuthState = { ...claims, nonce: randomBytes(16).toString('base64url'), expiresAt: now + ttlMs };
    const payload = Buffer.from(JSON.stringify(state), 'utf8').toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  /** The signature is checked before the payload is parsed: nothing an attacker wrote is read unless we signed it. */
  verify(token: string, now: number = Date.now()): StateVerification {
    const parts = token.length <= MAX_STATE_CHARS ? token.split('.') : [];
    const [payload, signature] = parts;
    if (parts.length !== 2 || !payload || !signature || !BASE64URL.test(payload) || !BASE64URL.test(signature)) {
      return { ok: false, problem: 'malformed' };
    }
    const expected = this.mac(payload);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, problem: 'forged' };
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return { ok: false, problem: 'malformed' };
    }
    const state = payloadSchema.safeParse(parsed);
    if (!state.success) return { ok: false, problem: 'malformed' };
    if (now > state.data.expiresAt) return { ok: false, problem: 'expired' };
    return { ok: true, state: state.data };
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload, 'utf8').digest();
  }
}

/** What each refusal tells the client. */
export const stateProblemMessage: Record<StateProblem, string> = {
  malformed: 'is not a state this service issued',
  forged: 'does not carry a valid signature',
  expired: 'has expired: request a new authorization URL',
};

/**
 * The signer for INTEGRATION_STATE_SECRET; without one, a random secret for this process, so states the process
 * issued stop verifying when it restarts (and across instances): fine for development, said once at start.
 */
export function oauthStateSigner(secret: string | undefined, log: Pick<Logger, 'warn'>): OAuthStateSigner {
  if (secret) return new OAuthStateSigner(secret);
  log.warn('INTEGRATION_STATE_SECRET is not set: OAuth states are signed with a random per-process secret and do not survive a restart');
  return new OAuthStateSigner(randomBytes(32));
}
