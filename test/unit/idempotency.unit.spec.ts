import { describe, expect, it } from 'vitest';
import { ConflictError } from '../../ledger/errors.ts';
import { isReplay, KEY_RETENTION_MS, rememberRequest, type RememberedRequests } from '../../ledger/idempotency.ts';
import type { CommandMetadata } from '../../ledger/message.ts';
import { metadata } from '../support/command-metadata.ts';

const t0 = metadata.issuedAt;
const keyed = (key: string, requestHash: string, issuedAt = t0): CommandMetadata => ({
  ...metadata,
  issuedAt,
  idempotency: { key, requestHash },
});

describe('idempotent requests', () => {
  it('remembers an accepted request with its hash and time, and nothing for a request without a key', () => {
    expect(rememberRequest(undefined, metadata)).toEqual({});
    expect(rememberRequest(undefined, keyed('k1', 'h1'))).toEqual({ requests: { k1: { hash: 'h1', at: t0 } } });
  });

  it('takes the same key with the same request as a replay, within the retention', () => {
    const { requests } = rememberRequest(undefined, keyed('k1', 'h1'));
    expect(isReplay(requests, keyed('k1', 'h1', t0 + 1000))).toBe(true);
    expect(isReplay(requests, keyed('k1', 'h1', t0 + KEY_RETENTION_MS - 1))).toBe(true);
  });

  it('refuses the same key with another request, naming the header', () => {
    const { requests } = rememberRequest(undefined, keyed('k1', 'h1'));
    const reuse = () => isReplay(requests, keyed('k1', 'h2'));
    expect(reuse).toThrow(ConflictError);
    expect(reuse).toThrow(
      expect.objectContaining({ details: [{ path: 'headers.idempotency-key', message: 'already used with a different request' }] }),
    );
  });

  it('decides afresh a request without a key, with another key, or in an aggregate that never remembered one', () => {
    const { requests } = rememberRequest(undefined, keyed('k1', 'h1'));
    expect(isReplay(requests, metadata)).toBe(false);
    expect(isReplay(requests, keyed('k2', 'h1'))).toBe(false);
    // Snapshots written before requests were remembered have no `requests` field.
    expect(isReplay(undefined, keyed('k1', 'h1'))).toBe(false);
  });

  it('forgets a key after the retention, whatever the request', () => {
    const { requests } = rememberRequest(undefined, keyed('k1', 'h1'));
    expect(isReplay(requests, keyed('k1', 'h1', t0 + KEY_RETENTION_MS))).toBe(false);
    expect(isReplay(requests, keyed('k1', 'h2', t0 + KEY_RETENTION_MS))).toBe(false);
  });

  it('drops expired requests whenever the aggregate changes, with or without a key', () => {
    const requests: RememberedRequests = { old: { hash: 'h0', at: t0 }, recent: { hash: 'h1', at: t0 + 1000 } };
    const later = t0 + KEY_RETENTION_MS + 500;
    expect(rememberRequest(requests, keyed('new', 'h2', later))).toEqual({
      requests: { recent: { hash: 'h1', at: t0 + 1000 }, new: { hash: 'h2', at: later } },
    });
    expect(rememberRequest(requests, { ...metadata, issuedAt: later })).toEqual({ requests: { recent: { hash: 'h1', at: t0 + 1000 } } });
    expect(rememberRequest(requests, { ...metadata, issuedAt: t0 + 1000 + KEY_RETENTION_MS })).toEqual({});
  });
});
