import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineSettings } from '../../ledger/config.ts';

/** Where the filesystem object store writes when STORAGE_DIR is unset: `<repo>/.data/objects` (git-ignored). */
export const DEFAULT_STORAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '.data', 'objects');

/** The object store: a directory, or an S3-compatible service. */
export const storageSettings = defineSettings(
  {
    /** The filesystem object store's directory (exports, catalog feeds), created on demand; used unless S3 is configured. */
    STORAGE_DIR: z.string().min(1).default(DEFAULT_STORAGE_DIR),
    /**
     * Keys the HMAC of the filesystem store's download links (GET /files/*). Unset: a fixed development key, with a
     * warning (links are then forgeable).
     */
    FILE_URL_SECRET: z.string().min(32).optional(),
    /** An S3-compatible service instead of the filesystem (S3_ENDPOINT or S3_BUCKET set); unset endpoint: AWS. */
    S3_ENDPOINT: z.string().url().optional(),
    /** Where clients reach the S3 service when the service itself reaches it by an internal name; download links are signed for it. */
    S3_PUBLIC_ENDPOINT: z.string().url().optional(),
    /** Created on first use when missing; default `commerce-ledger`. */
    S3_BUCKET: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name (3-63 of a-z, 0-9, . and -)')
      .optional(),
    S3_REGION: z.string().min(1).default('us-east-1'),
    S3_ACCESS_KEY_ID: z.string().min(1).optional(),
    S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
    /** Bucket in the path rather than the host name; default true when S3_ENDPOINT is set. */
    S3_FORCE_PATH_STYLE: z
      .enum(['true', 'false'])
      .transform((value) => value === 'true')
      .optional(),
  },
  ['FILE_URL_SECRET', 'S3_SECRET_ACCESS_KEY'],
);

export type StorageSettings = z.infer<z.ZodObject<typeof storageSettings.shape>>;

/** Why the S3 settings do not go together, or undefined when they do. */
export const storageProblem = ({ S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY }: StorageSettings): string | undefined =>
  (S3_ACCESS_KEY_ID === undefined) !== (S3_SECRET_ACCESS_KEY === undefined)
    ? 'set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or neither'
    : undefined;
