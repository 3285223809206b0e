import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import { DEFAULT_STORAGE_DIR } from '../../adapters/storage/storage-config.ts';
import { StartupError } from '../../ledger/startup-error.ts';
import { FilesystemObjectStore } from '../../adapters/storage/filesystem-store.ts';
import { createObjectStore, DEFAULT_S3_BUCKET } from '../../adapters/storage/index.ts';
import { S3ObjectStore } from '../../adapters/storage/s3-store.ts';

const base = { AUTH_DEV_SECRET: 'a-development-secret-0123456789' };
const silent = pino({ level: 'silent' });

describe('object storage settings', () => {
  it('defaults to the filesystem under <repo>/.data/objects, with links at http://HOST:PORT', () => {
    const config = loadConfig(base);
    expect(config.STORAGE_DIR).toBe(DEFAULT_STORAGE_DIR);
    expect(path.relative(process.cwd(), DEFAULT_STORAGE_DIR)).toBe(path.join('.data', 'objects'));
    expect(config.PUBLIC_BASE_URL).toBe('http://127.0.0.1:3000');
    expect(loadConfig({ ...base, HOST: '10.1.2.3', PORT: '8080' }).PUBLIC_BASE_URL).toBe('http://10.1.2.3:8080');
    expect(loadConfig({ ...base, HOST: '0.0.0.0', PORT: '8080' }).PUBLIC_BASE_URL).toBe('http://127.0.0.1:8080');
    expect(loadConfig({ ...base, HOST: '::1' }).PUBLIC_BASE_URL).toBe('http://[::1]:3000');
    expect(loadConfig({ ...base, PUBLIC_BASE_URL: 'https://ledger.example' }).PUBLIC_BASE_URL).toBe('https://ledger.example');
    const store = createObjectStore(config, silent);
    expect(store).toBeInstanceOf(FilesystemObjectStore);
    expect(store.kind).toBe('filesystem');
  });

  it('chooses S3 when S3_ENDPOINT or S3_BUCKET is set', () => {
    const withEndpoint = createObjectStore(loadConfig({ ...base, S3_ENDPOINT: 'http://127.0.0.1:18082' }), silent);
    expect(withEndpoint).toBeInstanceOf(S3ObjectStore);
    expect((withEndpoint as S3ObjectStore).bucket).toBe(DEFAULT_S3_BUCKET);
    const withBucket = createObjectStore(loadConfig({ ...base, S3_BUCKET: 'my-exports' }), silent);
    expect(withBucket.kind).toBe('s3');
    expect((withBucket as S3ObjectStore).bucket).toBe('my-exports');
  });

  it('refuses a short FILE_URL_SECRET without showing it, a bad bucket name, and one S3 key without the other', () => {
    const refusal = (env: Record<string, string>): string => {
      try {
        loadConfig({ ...base, ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(StartupError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    const short = refusal({ FILE_URL_SECRET: 'too-short-secret' });
    expect(short).toContain('FILE_URL_SECRET (value hidden)');
    expect(short).not.toContain('too-short-secret');
    expect(refusal({ S3_BUCKET: 'Not_A_Bucket' })).toContain('S3_BUCKET="Not_A_Bucket": must be an S3 bucket name');
    expect(refusal({ S3_ACCESS_KEY_ID: 'id' })).toContain('set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or neither');
    expect(refusal({ S3_SECRET_ACCESS_KEY: 'sshh', S3_ENDPOINT: 'nope' })).not.toContain('sshh');
  });
});
