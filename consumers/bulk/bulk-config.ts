import { z } from 'zod';
import { defineSettings } from '../../ledger/config.ts';

/** Bulk jobs: how large one may be, and how the worker paces them. */
export const bulkSettings = defineSettings({
  /** The most items one bulk job may hold. */
  BULK_MAX_ITEMS: z.coerce.number().int().min(1).default(100_000),
  /** The body limit of POST /api/v1/pim/bulk-jobs alone (the others keep BODY_LIMIT_BYTES): a full-size import fits. */
  BULK_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
  /** Items whose outcomes one RecordBulkItems reports (and so the step by which processed_items moves). */
  BULK_SLICE_ITEMS: z.coerce.number().int().min(1).default(500),
  /** Slices whose commands are out at once, every job together (one job alone may have them all); recorded in order per job. */
  BULK_SLICES_IN_FLIGHT: z.coerce.number().int().min(1).default(4),
  /** Jobs worked on side by side, so one tenant's large job does not hold another's back. */
  BULK_JOBS_AT_ONCE: z.coerce.number().int().min(1).default(4),
});
