import { z } from 'zod';
import { defineSettings } from '../../ledger/config.ts';

/** The key every tenant's webhook and notice secrets derive from (webhook-secret.ts), and a rotation's grace. */
export const webhookSecretSettings = defineSettings(
  {
    /**
     * Derives every tenant's inbound webhook secret (commands/integrations/webhook-secret.ts). Production must set it and
     * keep it stable: changing it changes every tenant's secret at once. Unset: a fixed development key, with a warning.
     */
    WEBHOOK_SECRET_KEY: z.string().min(32).optional(),
    /** How long a rotated-away webhook secret is still accepted. */
    WEBHOOK_SECRET_GRACE_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(24 * 60 * 60 * 1000),
  },
  ['WEBHOOK_SECRET_KEY'],
);
