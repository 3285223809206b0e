import { z } from 'zod';
import { defineSettings } from '../../ledger/config.ts';

/** The connection provider's client and the product push that calls it. */
export const providerSettings = defineSettings(
  {
    /** The connection provider (a Unified.to-style API); the default is where `npm start` runs the stand-in (stack/unified). */
    UNIFIED_API_URL: z.string().url().default('http://127.0.0.1:18090'),
    UNIFIED_API_TOKEN: z.string().default('dev-unified-token'),
    UNIFIED_WORKSPACE_ID: z.string().default('dev-workspace'),
    /** Verifies Unified's native webhook deliveries (`sig256`); unset: they are refused (401). `npm start`'s stand-in sets it. */
    UNIFIED_WORKSPACE_SECRET: z.string().min(1).optional(),
    /** How long one call to the provider may take before it counts as a timeout. */
    UNIFIED_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
    /** How long a product push claimed by a worker is left alone before it may be tried again (covers a crash mid-push). */
    PUSH_LEASE_MS: z.coerce.number().int().min(1_000).default(60_000),
    /** Calls in flight to one connection at most. */
    PUSH_PER_CONNECTION: z.coerce.number().int().min(1).max(256).default(8),
  },
  ['UNIFIED_API_TOKEN', 'UNIFIED_WORKSPACE_SECRET'],
);
