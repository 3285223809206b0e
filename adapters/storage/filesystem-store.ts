import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertValidKey } from './object-key.ts';
import type { DownloadOptions, ObjectStore, PutOptions } from './object-store.ts';
import { signedDownloadUrl } from './signed-url.ts';

export { verifyDownload } from './signed-url.ts';

export type FilesystemStoreOptions = {
  dir: string;
  /** Where the service's GET /files/* is reached; download links start with it. */
  publicBaseUrl: string;
  /** Keys the download links' HMAC. */
  secret: string;
};

/** An object as the file route serves it: the bytes (an open file: a replace while reading does not tear it) and their headers. */
export type StoredFile = { body: Readable; size: number; meta: PutOptions };

/**
 * Objects as files under `dir`, a key's segments as directories. Beside `a/b.json` sits `a/.b.json.meta.json` with the
 * content type, encoding and cache control given to `put`; temporary files are `a/.b.json.<random>.tmp`. Keys may not
 * have segments starting with `.`, so neither ever collides with an object.
 */
export class FilesystemObjectStore implements ObjectStore {
  readonly kind = 'filesystem' as const;
  readonly dir: string;

  private readonly options: FilesystemStoreOptions;

  constructor(options: FilesystemStoreOptions) {
    this.options = options;

    this.dir = path.resolve(options.dir);
  }

  /** What the download links are signed with; the file route checks them with it (verifyDownload). */
  get secret(): string {
    return this.options.secret;
  }

  private pathOf(key: string): { file: string; meta: string } {
    assertValidKey(key);
    const file = path.join(this.dir, ...key.split('/'));
    return { file, meta: path.join(path.dirname(file), `.${path.basename(file)}.meta.json`) };
  }

  /**
   * Temporary files in the object's own directory (one filesystem, so `rename` is atomic), each fsynced before it is
   * renamed over the old one: a crash leaves the old object or the new one, never a part. The metadata is renamed
   * first, so for a moment a replaced object's old bytes may go out with its new headers; the bytes are never mixed.
   */
  async put(key: string, body: Readable | Buffer | string, options: PutOptions = {}): Promise<{ bytes: number }> {
    const { file, meta } = this.pathOf(key);
    await fs.mkdir(path.dirname(file), { recursive: true });
    const suffix = `${randomBytes(6).toString('hex')}.tmp`;
    const tmpFile = path.join(path.dirname(file), `.${path.basename(file)}.${suffix}`);
    const tmpMeta = `${meta}.${suffix}`;
    let bytes = 0;
    const count = new Transform({
      transform(chunk: Buffer | string, _encoding, done) {
        bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
        done(null, chunk);
      },
    });
    try {
      const source = typeof body === 'string' || Buffer.isBuffer(body) ? Readable.from([Buffer.from(body)]) : body;
      await pipeline(source, count, createWriteStream(tmpFile, { flags: 'wx' }));
      await fsync(tmpFile);
      await fs.writeFile(tmpMeta, JSON.stringify(pickMeta(options)), { flag: 'wx' });
      await fsync(tmpMeta);
      await fs.rename(tmpMeta, meta);
      await fs.rename(tmpFile, file);
    } catch (error) {
      await Promise.all([fs.rm(tmpFile, { force: true }), fs.rm(tmpMeta, { force: true })]);
      throw error;
    }
    return { bytes };
  }

  async get(key: string): Promise<Readable | null> {
    return (await this.read(key))?.body ?? null;
  }

  /** The object with what `put` was told about it; null when there is none. */
  async read(key: string): Promise<StoredFile | null> {
    const { file, meta } = this.pathOf(key);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, 'r');
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) {
        await handle.close();
        return null;
      }
      const stored = await fs.readFile(meta, 'utf8').then(
        (text) => pickMeta(JSON.parse(text) as PutOptions),
        (error: unknown) => {
          if (isMissing(error)) return {};
          throw error;
        },
      );
      return { body: handle.createReadStream(), size: stat.size, meta: stored };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    const { file } = this.pathOf(key);
    const stat = await fs.stat(file).catch((error: unknown) => {
      if (isMissing(error)) return undefined;
      throw error;
    });
    return stat?.isFile() ?? false;
  }

  async delete(key: string): Promise<void> {
    const { file, meta } = this.pathOf(key);
    await fs.rm(file, { force: true });
    await fs.rm(meta, { force: true });
  }

  async downloadUrl(key: string, { expiresInSeconds, filename }: DownloadOptions): Promise<string> {
    assertValidKey(key);
    const expires = Math.floor(Date.now() / 1000) + Math.max(1, Math.ceil(expiresInSeconds));
    return signedDownloadUrl(this.options.publicBaseUrl, this.options.secret, { key, expires, filename });
  }

  async probe(): Promise<boolean> {
    try {
      await fs.mkdir(this.dir, { recursive: true });
      await fs.access(this.dir, fs.constants.W_OK);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {}
}

const pickMeta = ({ contentType, contentEncoding, cacheControl }: PutOptions): PutOptions => ({
  ...(contentType !== undefined ? { contentType } : {}),
  ...(contentEncoding !== undefined ? { contentEncoding } : {}),
  ...(cacheControl !== undefined ? { cacheControl } : {}),
});

const isMissing = (error: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '');

async function fsync(file: string): Promise<void> {
  const handle = await fs.open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
