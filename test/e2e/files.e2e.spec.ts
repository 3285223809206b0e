import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { S3PROXY_ACCESS_KEY_ID, S3PROXY_SECRET_ACCESS_KEY } from '../../stack/s3/s3proxy.ts';
import { FilesystemObjectStore } from '../../adapters/storage/filesystem-store.ts';
import { S3ObjectStore } from '../../adapters/storage/s3-store.ts';
import { startService, type Service } from '../support/service.ts';

const SECRET = 'files-e2e-secret-of-at-least-32-characters';

/** undici's request, not fetch: the body as sent (fetch would undo a Content-Encoding: gzip). */
async function get(url: string) {
  const res = await request(url);
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

const errorOf = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { error: { code: string; message: string } }).error;

describe('GET /files/*: the filesystem store’s signed links, served by the service', () => {
  let dir: string;
  let service: Service;
  let store: FilesystemObjectStore;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'files-e2e-'));
    service = await startService({ env: { STORAGE_DIR: dir, FILE_URL_SECRET: SECRET } });
    // The service's own store writes where this one does, with the same key: what one signs the other serves.
    store = new FilesystemObjectStore({ dir, publicBaseUrl: service.baseUrl, secret: SECRET });
  });

  afterAll(async () => {
    await service?.discard();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('serves the bytes as stored, with the put’s Content-Type, Content-Encoding and Cache-Control, and the file name', async () => {
    const key = `tenant-${randomBytes(4).toString('hex')}/feeds/feed-abc123.json`;
    const json = JSON.stringify({ '@type': 'ItemList', itemListElement: [] });
    await store.put(key, gzipSync(json), {
      contentType: 'application/ld+json',
      contentEncoding: 'gzip',
      cacheControl: 'public, max-age=31536000, immutable',
    });
    const url = await store.downloadUrl(key, { expiresInSeconds: 300, filename: 'catalog feed.json' });
    expect(url.startsWith(`${service.baseUrl}/files/${key}?expires=`)).toBe(true);

    const res = await get(url);
    expect(res.status).toBe(200);
    expect(gunzipSync(res.body).toString('utf8')).toBe(json);
    expect(res.headers['content-type']).toBe('application/ld+json');
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['content-length']).toBe(String(res.body.length));
    expect(res.headers['content-disposition']).toBe(`attachment; filename="catalog feed.json"; filename*=UTF-8''catalog%20feed.json`);
  });

  it('an object put without options goes out as application/octet-stream, without a file name', async () => {
    const key = `plain/${randomBytes(4).toString('hex')}.bin`;
    await store.put(key, Buffer.from([0, 1, 2, 3]));
    const res = await get(await store.downloadUrl(key, { expiresInSeconds: 60 }));
    expect(res.status).toBe(200);
    expect([...res.body]).toEqual([0, 1, 2, 3]);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['content-disposition']).toBeUndefined();
    expect(res.headers['content-encoding']).toBeUndefined();
  });

  it('refuses a link whose key, file name or signature was changed with 403 and the error body', async () => {
    const key = `tenant-a/exports/${randomBytes(4).toString('hex')}.jsonl.gz`;
    const other = `tenant-b/exports/${randomBytes(4).toString('hex')}.jsonl.gz`;
    await store.put(key, 'a');
    await store.put(other, 'b');
    const url = new URL(await store.downloadUrl(key, { expiresInSeconds: 300, filename: 'a.jsonl.gz' }));

    const otherKey = new URL(url);
    otherKey.pathname = `/files/${other}`;
    const otherName = new URL(url);
    otherName.searchParams.set('filename', 'b.jsonl.gz');
    const noSignature = new URL(url);
    noSignature.searchParams.delete('signature');
    const badSignature = new URL(url);
    badSignature.searchParams.set('signature', 'f'.repeat(64));
    const later = new URL(url);
    later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));

    for (const bad of [otherKey, otherName, noSignature, badSignature, later]) {
      const res = await get(bad.toString());
      expect(res.status, bad.toString()).toBe(403);
      expect(errorOf(res.body)).toEqual({ code: 'forbidden', message: 'the download link is not valid', details: [] });
    }
    expect((await get(url.toString())).status).toBe(200);
  });

  it('refuses an expired link with 403', async () => {
    const key = `expiring/${randomBytes(4).toString('hex')}.json`;
    await store.put(key, '{}');
    const url = await store.downloadUrl(key, { expiresInSeconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const res = await get(url);
    expect(res.status).toBe(403);
    expect(errorOf(res.body)).toMatchObject({ code: 'forbidden', message: 'the download link has expired' });
  });

  it('answers 404 to a genuine link whose object is gone', async () => {
    const key = `gone/${randomBytes(4).toString('hex')}.json`;
    await store.put(key, '{}');
    const url = await store.downloadUrl(key, { expiresInSeconds: 60 });
    await store.delete(key);
    const res = await get(url);
    expect(res.status).toBe(404);
    expect(errorOf(res.body).code).toBe('not_found');
  });

  it('is not in the OpenAPI document', async () => {
    const res = await get(`${service.baseUrl}/openapi.json`);
    const paths = Object.keys((JSON.parse(res.body.toString('utf8')) as { paths: Record<string, unknown> }).paths);
    expect(paths.some((p) => p.startsWith('/files'))).toBe(false);
  });
});

describe('GET /files/* with the S3 store', () => {
  let service: Service;
  let dir: string;
  const bucket = `files-e2e-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    // A file where the filesystem store would look: served only if the service wrongly chose that store.
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'files-e2e-s3-'));
    await new FilesystemObjectStore({ dir, publicBaseUrl: 'http://unused', secret: SECRET }).put('x/y.json', '{}');
    service = await startService({
      env: {
        STORAGE_DIR: dir,
        S3_ENDPOINT: inject('stack').s3Endpoint,
        S3_BUCKET: bucket,
        S3_ACCESS_KEY_ID: S3PROXY_ACCESS_KEY_ID,
        S3_SECRET_ACCESS_KEY: S3PROXY_SECRET_ACCESS_KEY,
        FILE_URL_SECRET: SECRET,
      },
    });
  });

  afterAll(async () => {
    await service?.discard();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('answers 404 even to a well-signed link: S3 links are presigned at the bucket', async () => {
    const s3 = new S3ObjectStore({
      endpoint: inject('stack').s3Endpoint,
      bucket,
      region: 'us-east-1',
      accessKeyId: S3PROXY_ACCESS_KEY_ID,
      secretAccessKey: S3PROXY_SECRET_ACCESS_KEY,
      forcePathStyle: true,
    });
    try {
      await s3.put('x/y.json', '{}');
      const signer = new FilesystemObjectStore({ dir, publicBaseUrl: service.baseUrl, secret: SECRET });
      const res = await get(await signer.downloadUrl('x/y.json', { expiresInSeconds: 60 }));
      expect(res.status).toBe(404);
      expect(errorOf(res.body).code).toBe('not_found');
      const presigned = await get(await s3.downloadUrl('x/y.json', { expiresInSeconds: 60 }));
      expect(presigned.status).toBe(200);
      expect(presigned.body.toString('utf8')).toBe('{}');
    } finally {
      await s3.close();
    }
  });
});
