import type { Readable } from 'node:stream';

export type PutOptions = {
  contentType?: string;
  /** e.g. `gzip` for an object written compressed. */
  contentEncoding?: string;
  cacheControl?: string;
};

export type DownloadOptions = {
  /** Seconds the link stays valid. */
  expiresInSeconds: number;
  /** Suggested file name for the download (Content-Disposition: attachment). */
  filename?: string;
};

/**
 * Where exports and catalog feeds are written (issue 14): the local filesystem by default, an S3-compatible service when
 * configured. Keys are `/`-separated relative paths (no `..`, no leading `/`); each implementation refuses others.
 */
export interface ObjectStore {
  readonly kind: 'filesystem' | 's3';
  /** Writes the whole body under `key`, atomically: a reader sees the old object (or none) until the new one is complete. */
  put(key: string, body: Readable | Buffer | string, options?: PutOptions): Promise<{ bytes: number }>;
  /** The object's bytes as stored (still compressed if written so), or null when there is none. */
  get(key: string): Promise<Readable | null>;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** A time-limited URL anyone holding it can GET the object with, and nobody can derive from the key alone. */
  downloadUrl(key: string, options: DownloadOptions): Promise<string>;
  /** Quick reachability check for readiness (true when the store answers). */
  probe(): Promise<boolean>;
  close(): Promise<void>;
}
