import { z } from 'zod';
import { defineSettings } from '../../ledger/config.ts';

/** Export completion notices: the mail server, the sender, which webhook hosts may be reached, the pace. */
export const noticeSettings = defineSettings({
  /** The SMTP server of export completion notices by email (credentials in the URL); unset: those are skipped, with a warning. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/[^/]/, 'must be an smtp:// or smtps:// URL, e.g. smtp://user:password@mail.example.com:587')
    .optional(),
  /** The From of those emails. */
  NOTICE_FROM: z.string().min(3).default('commerce-ledger <no-reply@localhost>'),
  /** Lets export notice webhooks reach loopback and private addresses (development, tests); by default public hosts only. */
  NOTICE_ALLOW_PRIVATE_NETWORKS: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  /** How long the download links a notice carries stay valid: receivers may fetch them well after the notice. */
  NOTICE_LINK_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .default(24 * 3600),
  /** Notices delivered side by side. */
  NOTICES_AT_ONCE: z.coerce.number().int().min(1).default(8),
});
