import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { S3PROXY_ACCESS_KEY_ID, S3PROXY_SECRET_ACCESS_KEY } from '../../stack/s3/s3proxy.ts';
import { FilesystemObjectStore } from '../../adapters/storage/filesystem-store.ts';
import type { ObjectStore } from '../../adapters/storage/object-store.ts';
import { S3ObjectStore } from '../../adapters/storage/s3-store.ts';
import { startPrivateS3, type PrivateS3 } from '../support/private-s3.ts';

const MiB = 1024 * 1024;

/** `size` pseudo-random bytes in 64 KiB chunks, produced as they are read (never one big buffer). */
function streamed(size: number, seed: string): { body: Readable; sha256: Promise<string> } {
  const hash = createHash('sha256');
  let sent = 0;
  let block = createHash('sha256').update(seed).digest();
  const body = new Readable({
    read() {
      if (sent >= size) return void this.push(null);
      const chunk = Buffer.alloc(Math.min(64 * 1024, size - sent));
      for (let i = 0; i < chunk.length; i += 32) {
        block = createHash('sha256').update(block).digest();
        block.copy(chunk, i);
      }
      sent += chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  const sha256 = new Promise<string>((resolve) => body.once('end', () => resolve(hash.digest('hex'))));
  return { body, sha256 };
}

/** A body that sends `first`, then waits until `release` is called before it ends. */
function held(first: Buffer): { body: Readable; release: () => void; started: Promise<void> } {
  let release!: () => void;
  let started!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  let step = 0;
  const body = new Readable({
    read() {
      if (step === 0) {
        step = 1;
        started();
        this.push(first);
      } else if (step === 1) {
        step = 2;
        void released.then(() => this.push(null));
      }
    },
  });
  return { body, release, started: startedPromise };
}

async function text(stream: Readable | null): Promise<string | null> {
  if (!stream) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function sha256Of(stream: Readable): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

const unique = (prefix: string) => `${prefix}/${randomBytes(6).toString('hex')}`;

type Backend = { name: string; store: () => ObjectStore };

let fsDir: string;
let filesystem: FilesystemObjectStore;
let s3: S3ObjectStore;
const bucket = `test-${randomBytes(6).toString('hex')}`;

beforeAll(async () => {
  fsDir = await fs.mkdtemp(path.join(os.tmpdir(), 'object-store-'));
  filesystem = new FilesystemObjectStore({
    dir: path.join(fsDir, 'objects'),
    publicBaseUrl: 'http://127.0.0.1:9',
    secret: 'a-test-secret-of-at-least-32-characters',
  });
  s3 = new S3ObjectStore({
    endpoint: inject('stack').s3Endpoint,
    bucket,
    region: 'us-east-1',
    accessKeyId: S3PROXY_ACCESS_KEY_ID,
    secretAccessKey: S3PROXY_SECRET_ACCESS_KEY,
    forcePathStyle: true,
  });
});

afterAll(async () => {
  await filesystem?.close();
  await s3?.close();
  await fs.rm(fsDir, { recursive: true, force: true });
});

const backends: Backend[] = [
  { name: 'filesystem', store: () => filesystem },
  { name: 's3 (the stack S3Proxy)', store: () => s3 },
];

describe.each(backends)('ObjectStore contract: $name', ({ store }) => {
  it('round-trips a streamed 12 MiB body (a multipart upload on S3) and counts its bytes', async () => {
    const key = unique('round-trip');
    const size = 12 * MiB + 12_345;
    const { body, sha256 } = streamed(size, key);
    const { bytes } = await store().put(key, body, { contentType: 'application/octet-stream' });
    expect(bytes).toBe(size);
    const read = await store().get(key);
    expect(read).not.toBeNull();
    expect(await sha256Of(read!)).toEqual({ sha256: await sha256, bytes: size });
    expect(await store().exists(key)).toBe(true);
    if (store().kind === 's3') {
      // A multipart object's ETag ends with its part count: 12 MiB went up in 5 MiB parts.
      const res = await request(await store().downloadUrl(key, { expiresInSeconds: 60 }));
      await res.body.dump();
      expect(res.headers.etag).toMatch(/-3"$/);
    }
  });

  it('takes a Buffer and a string, and replaces an object whole', async () => {
    const key = unique('replace');
    expect(await store().put(key, Buffer.from('first'))).toEqual({ bytes: 5 });
    expect(await text(await store().get(key))).toBe('first');
    expect(await store().put(key, 'second, with ünïcode')).toEqual({ bytes: Buffer.byteLength('second, with ünïcode') });
    expect(await text(await store().get(key))).toBe('second, with ünïcode');
  });

  it('a reader during a slow replace sees the old object, then the new one once the put completes', async () => {
    const key = unique('atomic');
    await store().put(key, 'old content');
    // Over one part: on S3 the multipart upload has begun (its first part sent) while the reader looks.
    const first = Buffer.alloc(6 * MiB, 'n');
    const { body, release, started } = held(first);
    const putting = store().put(key, body);
    await started;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await text(await store().get(key))).toBe('old content');
    expect(await store().exists(key)).toBe(true);
    release();
    expect(await putting).toEqual({ bytes: first.length });
    const replaced = await store().get(key);
    expect(await sha256Of(replaced!)).toEqual({ sha256: createHash('sha256').update(first).digest('hex'), bytes: first.length });
  });

  it('a missing key reads as null, does not exist, and deletes without error', async () => {
    const key = unique('missing');
    expect(await store().get(key)).toBeNull();
    expect(await store().exists(key)).toBe(false);
    await store().delete(key);
    await store().put(key, 'here');
    await store().delete(key);
    expect(await store().get(key)).toBeNull();
    expect(await store().exists(key)).toBe(false);
  });

  it('a failing body stream fails the put and leaves the old object', async () => {
    const key = unique('failing-body');
    await store().put(key, 'kept');
    let sent = false;
    const body = new Readable({
      read() {
        if (!sent) {
          sent = true;
          this.push(Buffer.alloc(1024, 'x'));
        } else this.destroy(new Error('the source broke'));
      },
    });
    await expect(store().put(key, body)).rejects.toThrow();
    expect(await text(await store().get(key))).toBe('kept');
  });

  it.each(['', '/absolute', '../escape', 'a/../b', 'a//b', 'a/', './a', 'a/.hidden', 'back\\slash', 'nul\u0000'])(
    'refuses the key %j on every operation',
    async (key) => {
      await expect(store().put(key, 'x')).rejects.toThrow(/invalid object key/);
      await expect(store().get(key)).rejects.toThrow(/invalid object key/);
      await expect(store().exists(key)).rejects.toThrow(/invalid object key/);
      await expect(store().delete(key)).rejects.toThrow(/invalid object key/);
      await expect(store().downloadUrl(key, { expiresInSeconds: 60 })).rejects.toThrow(/invalid object key/);
    },
  );

  it('answers the probe', async () => {
    expect(await store().probe()).toBe(true);
  });
});

describe('filesystem store on disk', () => {
  it('writes nothing outside its directory and leaves no temporary file; keeps the put options beside the object', async () => {
    const key = 'tenant-a/feeds/feed.json';
    await filesystem.put(key, gzipSync('{"a":1}'), {
      contentType: 'application/json',
      contentEncoding: 'gzip',
      cacheControl: 'public, max-age=31536000, immutable',
    });
    expect(await fs.readdir(path.join(fsDir, 'objects', 'tenant-a', 'feeds'))).toEqual(['.feed.json.meta.json', 'feed.json']);
    const file = await filesystem.read(key);
    expect(file?.meta).toEqual({
      contentType: 'application/json',
      contentEncoding: 'gzip',
      cacheControl: 'public, max-age=31536000, immutable',
    });
    file?.body.destroy();
    await filesystem.delete(key);
    expect(await fs.readdir(path.join(fsDir, 'objects', 'tenant-a', 'feeds'))).toEqual([]);
  });
});

describe('S3 presigned links (the stack S3Proxy checks signatures)', () => {
  it('serves the bytes with the stored headers and the attachment name', async () => {
    const key = unique('links') + '/catalog.jsonl.gz';
    const gz = gzipSync('{"sku":"A"}\n');
    await s3.put(key, gz, { contentType: 'application/x-ndjson', contentEncoding: 'gzip', cacheControl: 'private, max-age=60' });
    const url = await s3.downloadUrl(key, { expiresInSeconds: 60, filename: 'catalog export.jsonl.gz' });
    expect(new URL(url).searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    const res = await request(url);
    const body = Buffer.from(await res.body.arrayBuffer());
    expect(res.statusCode).toBe(200);
    expect(body.equals(gz)).toBe(true);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['cache-control']).toBe('private, max-age=60');
    expect(res.headers['content-disposition']).toContain('filename="catalog export.jsonl.gz"');
  });

  it('refuses a tampered link and an expired one with 403', async () => {
    const key = unique('links') + '/secret.json';
    await s3.put(key, '{"private":true}', { contentType: 'application/json' });
    const url = new URL(await s3.downloadUrl(key, { expiresInSeconds: 60 }));

    const otherKey = new URL(url);
    otherKey.pathname = otherKey.pathname.replace('secret.json', 'other.json');
    const forged = new URL(url);
    const signature = forged.searchParams.get('X-Amz-Signature')!;
    forged.searchParams.set('X-Amz-Signature', `${signature[0] === '0' ? '1' : '0'}${signature.slice(1)}`);
    for (const bad of [otherKey, forged]) {
      const res = await request(bad.toString());
      await res.body.text();
      expect(res.statusCode).toBe(403);
    }

    const shortLived = await s3.downloadUrl(key, { expiresInSeconds: 2 });
    const fresh = await request(shortLived);
    expect(await fresh.body.text()).toBe('{"private":true}');
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    const res = await request(shortLived);
    await res.body.text();
    expect(res.statusCode).toBe(403);
  });
});

describe('S3 store when the server goes away (a private S3Proxy)', () => {
  let server: PrivateS3;
  let store: S3ObjectStore;

  beforeAll(async () => {
    server = await startPrivateS3('s3-outage');
    store = new S3ObjectStore({
      endpoint: server.endpoint,
      bucket: 'outage',
      region: 'us-east-1',
      accessKeyId: S3PROXY_ACCESS_KEY_ID,
      secretAccessKey: S3PROXY_SECRET_ACCESS_KEY,
      forcePathStyle: true,
    });
  });

  afterAll(async () => {
    await store?.close();
    await server?.destroy();
  });

  it('fails a put within seconds while it is down, and works again once it is back', async () => {
    await store.put('before', 'up');
    await server.stop();

    const started = Date.now();
    await expect(store.put('during', streamed(256 * 1024, 'during').body)).rejects.toThrow();
    await expect(store.get('before')).rejects.toThrow();
    expect(await store.probe()).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);

    await server.start();
    await store.put('after', 'back');
    expect(await text(await store.get('before'))).toBe('up');
    expect(await text(await store.get('after'))).toBe('back');
    expect(await store.probe()).toBe(true);
  });
});
