import { Readable, Transform } from 'node:stream';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { assertValidKey, attachmentDisposition } from './object-key.ts';
import type { DownloadOptions, ObjectStore, PutOptions } from './object-store.ts';

export type S3StoreOptions = {
  bucket: string;
  /** Unset: AWS itself. */
  endpoint?: string;
  /** Where clients reach the same service when the service reaches it by an internal name (a compose network): links are signed for it. */
  publicEndpoint?: string;
  region: string;
  /** Both or neither; neither: the SDK's default chain (environment, profile, instance role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `http://host/bucket/key` rather than `http://bucket.host/key`; what S3-compatible servers usually need. */
  forcePathStyle: boolean;
  timeouts?: Partial<S3Timeouts>;
};

export type S3Timeouts = {
  /** To open a connection; an unreachable host fails after this. */
  connectMs: number;
  /** Of silence on an open connection, per request. */
  requestMs: number;
  /** Attempts per request (first try included), with the SDK's backoff between them. */
  maxAttempts: number;
  probeMs: number;
};

const DEFAULT_TIMEOUTS: S3Timeouts = { connectMs: 2_000, requestMs: 30_000, maxAttempts: 3, probeMs: 2_000 };
/** S3's smallest part; a body up to it goes in one PutObject, a larger one as a multipart upload of such parts. */
const PART_BYTES = 5 * 1024 * 1024;
/** The presigner's bound (SigV4): seven days. */
const MAX_EXPIRY_SECONDS = 7 * 24 * 60 * 60;

/**
 * The AWS SDK, loaded at the store's first request: about 5 MB of heap in every process that never exports (a bulk
 * import's, a replay's) and start-up time, for a service whose S3 is used only by exports and their links.
 */
type Sdk = {
  s3: typeof import('@aws-sdk/client-s3');
  Upload: (typeof import('@aws-sdk/lib-storage'))['Upload'];
  getSignedUrl: (typeof import('@aws-sdk/s3-request-presigner'))['getSignedUrl'];
};
let sdkLoading: Promise<Sdk> | undefined;
const loadSdk = (): Promise<Sdk> =>
  (sdkLoading ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage'), import('@aws-sdk/s3-request-presigner')]).then(
    ([s3, { Upload }, { getSignedUrl }]) => ({ s3, Upload, getSignedUrl }),
  ));

type Clients = { sdk: Sdk; client: S3Client; signer: S3Client };

/**
 * Objects in one bucket of an S3-compatible service, created on first use when missing. A put is atomic by S3's own
 * rule: an object (single or multipart) becomes visible whole when its upload completes. Download links are presigned
 * GETs (SigV4 query authentication), so the service never serves the bytes itself.
 */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  readonly bucket: string;
  private readonly options: S3StoreOptions;
  private readonly timeouts: S3Timeouts;
  /** `signer` signs links only (no requests): for the public endpoint when there is one, since SigV4 signs the host. */
  private clients: Promise<Clients> | undefined;
  private closed = false;
  private bucketReady: Promise<void> | undefined;

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.options = options;
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  }

  private sdk(): Promise<Clients> {
    if (this.closed) return Promise.reject(new Error('the object store is closed'));
    this.clients ??= loadSdk().then((sdk) => {
      const { accessKeyId, secretAccessKey, region, forcePathStyle, endpoint, publicEndpoint } = this.options;
      const config = (at: string | undefined): S3ClientConfig => ({
        region,
        endpoint: at,
        forcePathStyle,
        credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
        maxAttempts: this.timeouts.maxAttempts,
        requestHandler: { connectionTimeout: this.timeouts.connectMs, requestTimeout: this.timeouts.requestMs },
        // S3-compatible servers do not all know the flexible checksums the SDK now sends by default.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      const client = new sdk.s3.S3Client(config(endpoint));
      return { sdk, client, signer: publicEndpoint ? new sdk.s3.S3Client(config(publicEndpoint)) : client };
    });
    return this.clients;
  }

  /** Once per store; a failure is not remembered, so the next call tries again (the service may be back). */
  private ensureBucket(): Promise<void> {
    this.bucketReady ??= this.createBucketIfMissing().catch((error: unknown) => {
      this.bucketReady = undefined;
      throw error;
    });
    return this.bucketReady;
  }

  private async createBucketIfMissing(): Promise<void> {
    const { sdk, client } = await this.sdk();
    try {
      await client.send(new sdk.s3.HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (error) {
      if (!isNotFound(sdk, error)) throw error;
    }
    try {
      await client.send(new sdk.s3.CreateBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      // Another process (or another store in this one) created it between our HEAD and our CREATE.
      const taken = error instanceof sdk.s3.S3ServiceException && ['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes(error.name);
      if (!taken) throw error;
    }
  }

  async put(key: string, body: Readable | Buffer | string, options: PutOptions = {}): Promise<{ bytes: number }> {
    assertValidKey(key);
    await this.ensureBucket();
    const { sdk, client } = await this.sdk();
    let bytes = 0;
    let counted: Buffer | Readable;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      counted = Buffer.from(body);
      bytes = counted.length;
    } else {
      const counter = new Transform({
        transform(chunk: Buffer | string, _encoding, done) {
          bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
          done(null, chunk);
        },
      });
      // pipe() does not carry the source's error on: the upload would wait for more bytes forever.
      body.once('error', (error) => counter.destroy(error));
      counted = body.pipe(counter);
    }
    const upload = new sdk.Upload({
      client,
      partSize: PART_BYTES,
      queueSize: 2,
      leavePartsOnError: false,
      params: {
        Bucket: this.bucket,
        Key: key,
        Body: counted,
        ContentType: options.contentType,
        ContentEncoding: options.contentEncoding,
        CacheControl: options.cacheControl,
      },
    });
    await upload.done();
    return { bytes };
  }

  async get(key: string): Promise<Readable | null> {
    assertValidKey(key);
    await this.ensureBucket();
    const { sdk, client } = await this.sdk();
    try {
      const { Body } = await client.send(new sdk.s3.GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return Body instanceof Readable ? Body : Readable.from([]);
    } catch (error) {
      if (isNotFound(sdk, error)) return null;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    assertValidKey(key);
    await this.ensureBucket();
    const { sdk, client } = await this.sdk();
    try {
      await client.send(new sdk.s3.HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (error) {
      if (isNotFound(sdk, error)) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    await this.ensureBucket();
    const { sdk, client } = await this.sdk();
    await client.send(new sdk.s3.DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async downloadUrl(key: string, { expiresInSeconds, filename }: DownloadOptions): Promise<string> {
    assertValidKey(key);
    const { sdk, signer } = await this.sdk();
    const command = new sdk.s3.GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ...(filename !== undefined ? { ResponseContentDisposition: attachmentDisposition(filename) } : {}),
    });
    const expiresIn = Math.min(MAX_EXPIRY_SECONDS, Math.max(1, Math.ceil(expiresInSeconds)));
    return sdk.getSignedUrl(signer, command, { expiresIn });
  }

  async probe(): Promise<boolean> {
    const { sdk, client } = await this.sdk();
    try {
      await client.send(new sdk.s3.HeadBucketCommand({ Bucket: this.bucket }), {
        abortSignal: AbortSignal.timeout(this.timeouts.probeMs),
      });
      return true;
    } catch (error) {
      // Reachable and answering; the bucket is created on the first write.
      return isNotFound(sdk, error);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const clients = await this.clients?.catch(() => undefined);
    clients?.client.destroy();
    if (clients && clients.signer !== clients.client) clients.signer.destroy();
  }
}

/** HEAD answers a bare 404 (`NotFound`); GET names it (`NoSuchKey`, `NoSuchBucket`). */
function isNotFound(sdk: Sdk, error: unknown): boolean {
  if (!(error instanceof sdk.s3.S3ServiceException)) return false;
  return error.$metadata.httpStatusCode === 404 || ['NotFound', 'NoSuchKey', 'NoSuchBucket'].includes(error.name);
}
