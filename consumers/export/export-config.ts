import { z } from 'zod';
import { defineSettings } from '../../ledger/config.ts';

/** Full-catalog exports: how many are written at once, and how long a failing one keeps retrying. */
export const exportSettings = defineSettings({
  /** Exports of different tenants written side by side. */
  EXPORTS_AT_ONCE: z.coerce.number().int().min(1).default(2),
  /** How long an export keeps retrying a store or database that fails before it is recorded FAILED. */
  EXPORT_GIVE_UP_AFTER_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(10 * 60_000),
});
