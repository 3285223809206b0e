import { z } from 'zod';
import { defineSettings } from '../ledger/config.ts';

/** The HTTP edge's settings: authentication, the body limit, the OAuth state's key. */
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
    /** Signs the OAuth `state`; a random one per process when unset (states then do not survive a restart). */
    INTEGRATION_STATE_SECRET: z.string().min(16).optional(),
  },
  ['AUTH_DEV_SECRET', 'INTEGRATION_STATE_SECRET'],
);
