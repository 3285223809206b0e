import { z } from 'zod';
import { defineSettings } from '../../ledger/config.ts';

/** Agentic checkout's background work. */
export const checkoutSettings = defineSettings({
  /**
   * How long a started completion may stay unfinished (neither completed nor failed) before the completion sweeper
   * finishes it (its order placed and decided: the session completed or failed) or gives it up (its stock released).
   * Well past what a complete request takes (COMMAND_TIMEOUT_MS per step).
   */
  CHECKOUT_COMPLETION_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 3600)
    .default(30),
});
