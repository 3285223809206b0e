import type { Logger } from '../../ledger/logger.ts';
import { FilesystemObjectStore } from './filesystem-store.ts';
import type { ObjectStore } from './object-store.ts';
import { S3ObjectStore } from './s3-store.ts';
import type { StorageSettings } from './storage-config.ts';

export type { ObjectStore } from './object-store.ts';

/** Used when FILE_URL_SECRET is unset: public, so anyone can forge download links (development only). */
export const DEVELOPMENT_FILE_URL_SECRET = 'commerce-ledger-development-file-url-secret';

/** The bucket when S3_ENDPOINT is set without S3_BUCKET. */
export const DEFAULT_S3_BUCKET = 'commerce-ledger';

type StorageConfig = StorageSettings & { PUBLIC_BASE_URL: string };

/** S3 when S3_ENDPOINT or S3_BUCKET is set, else the filesystem under STORAGE_DIR. */
export function createObjectStore(config: StorageConfig, logger: Logger): ObjectStore {
  if (config.S3_ENDPOINT || config.S3_BUCKET) {
    const bucket = config.S3_BUCKET ?? DEFAULT_S3_BUCKET;
    logger.info({ endpoint: config.S3_ENDPOINT ?? 'AWS', bucket }, 'object storage: S3');
    return new S3ObjectStore({
      bucket,
      endpoint: config.S3_ENDPOINT,
      publicEndpoint: config.S3_PUBLIC_ENDPOINT,
      region: config.S3_REGION,
      accessKeyId: config.S3_ACCESS_KEY_ID,
      secretAccessKey: config.S3_SECRET_ACCESS_KEY,
      forcePathStyle: config.S3_FORCE_PATH_STYLE ?? config.S3_ENDPOINT !== undefined,
    });
  }
  if (!config.FILE_URL_SECRET) {
    logger.warn('FILE_URL_SECRET is unset: download links are signed with a public development key; set it in production');
  }
  logger.info({ dir: config.STORAGE_DIR }, 'object storage: filesystem');
  return new FilesystemObjectStore({
    dir: config.STORAGE_DIR,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    secret: config.FILE_URL_SECRET ?? DEVELOPMENT_FILE_URL_SECRET,
  });
}
