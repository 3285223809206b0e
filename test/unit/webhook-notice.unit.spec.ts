import { describe, expect, it } from 'vitest';
import { exportNotice, noticeBody } from '../../consumers/notices/export-notice.ts';
import { backoffDelayMs } from '../../consumers/notices/notice-delivery.ts';
import {
  retryAfterMs,
  sendWebhookNotice,
  verifyWebhookNotice,
  webhookSignature,
  webhookUrlProblem,
} from '../../consumers/notices/webhook-notice.ts';
import { webhookNoticeHeaders } from '../../consumers/notices/webhook-signature.ts';

const secret = 'tenant-secret';
const body = '{"type":"catalog.export.completed"}';
const now = 1_700_000_000;

describe('the webhook signature', () => {
  it('is v1= and the hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed by the secret (as openssl computes it)', () => {
    // printf '%s' '1700000000.{"type":"catalog.export.completed"}' | openssl dgst -sha256 -hmac 'tenant-secret'
    expect(webhookSignature(secret, now, body)).toBe('v1=019081734bdec3b1cec392b9d6e6f745455819e9f16eb430135f27535188e966');
    expect(webhookSignature(secret, now, Buffer.from(body))).toBe(webhookSignature(secret, now, body));
  });

  it('verifies the headers of a delivery, in any header case, from node:http or fetch', () => {
    const headers = webhookNoticeHeaders(secret, 'export-1', body, now);
    expect(headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'export-1', 'webhook-timestamp': String(now) });
    expect(verifyWebhookNotice(secret, headers, body, 300, now)).toBe(true);
    expect(verifyWebhookNotice(secret, new Headers(headers), Buffer.from(body), 300, now + 299)).toBe(true);
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhookNotice(secret, upper, body, 300, now)).toBe(true);
  });

  it('fails a tampered body, another secret, a moved timestamp, or a timestamp outside the tolerance either way', () => {
    const headers = webhookNoticeHeaders(secret, 'export-1', body, now);
    expect(verifyWebhookNotice(secret, headers, body.replace('completed', 'failed'), 300, now)).toBe(false);
    expect(verifyWebhookNotice('another-secret', headers, body, 300, now)).toBe(false);
    expect(verifyWebhookNotice(secret, { ...headers, 'webhook-timestamp': String(now + 1) }, body, 300, now)).toBe(false);
    expect(verifyWebhookNotice(secret, headers, body, 300, now + 301)).toBe(false);
    expect(verifyWebhookNotice(secret, headers, body, 300, now - 301)).toBe(false);
  });

  it('fails missing or malformed headers, and accepts any one of several signatures (a secret being rotated)', () => {
    const headers = webhookNoticeHeaders(secret, 'export-1', body, now);
    const { 'webhook-signature': signature, ...unsigned } = headers;
    expect(verifyWebhookNotice(secret, unsigned, body, 300, now)).toBe(false);
    expect(verifyWebhookNotice(secret, { ...headers, 'webhook-timestamp': '1.7e9' }, body, 300, now)).toBe(false);
    expect(verifyWebhookNotice(secret, { ...headers, 'webhook-signature': (signature as string).slice(3) }, body, 300, now)).toBe(false);
    const rotated = `${webhookSignature('old-secret', now, body)} ${signature}`;
    expect(verifyWebhookNotice(secret, { ...headers, 'webhook-signature': rotated }, body, 300, now)).toBe(true);
    expect(
      verifyWebhookNotice(
        secret,
        { ...headers, 'webhook-signature': [webhookSignature('x', now, body), signature as string] },
        body,
        300,
        now,
      ),
    ).toBe(true);
  });
});

describe('the retry schedule', () => {
  it('doubles from the base, capped, with at most half of each wait random', () => {
    const backoff = { baseMs: 1000, maxMs: 8000 };
    expect([1, 2, 3, 4, 5].map((n) => backoffDelayMs(n, backoff, () => 0))).toEqual([500, 1000, 2000, 4000, 4000]);
    expect([1, 2, 3, 4, 5].map((n) => backoffDelayMs(n, backoff, () => 1))).toEqual([1000, 2000, 4000, 8000, 8000]);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const nowMs = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('1', nowMs)).toBe(1000);
    expect(retryAfterMs(' 120 ', nowMs)).toBe(120_000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', nowMs)).toBe(30_000);
    expect(retryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', nowMs)).toBe(0);
    expect(retryAfterMs('soon', nowMs)).toBeUndefined();
    expect(retryAfterMs(null, nowMs)).toBeUndefined();
  });
});

describe('sending a webhook notice', () => {
  it('refuses a URL that is not http(s), or carries credentials, without a request', async () => {
    expect(webhookUrlProblem('https://hooks.example.com/x')).toBeUndefined();
    let calls = 0;
    const fetchImpl = (async () => {
      calls += 1;
      return new Response(null, { status: 200 });
    }) as typeof fetch;
    for (const url of ['ftp://example.com/x', 'file:///etc/passwd', 'not a url', 'https://user:pw@example.com/']) {
      const outcome = await sendWebhookNotice({ url, secret, body, id: 'e', fetchImpl });
      expect(outcome, url).toMatchObject({ delivered: false, attempts: 0, error: expect.stringContaining('refused') });
    }
    expect(calls).toBe(0);
  });

  it('does not retry a 4xx other than 429, and signs each attempt afresh with the same id', async () => {
    const seen: Headers[] = [];
    const answers = [503, 404];
    const fetchImpl = (async (_url: string | URL | Request, init?: RequestInit) => {
      seen.push(new Headers(init?.headers));
      return new Response('no', { status: answers.shift() ?? 200 });
    }) as typeof fetch;
    const outcome = await sendWebhookNotice({
      url: 'http://hooks.example.com/x',
      secret,
      body,
      id: 'e-1',
      attempts: 5,
      fetchImpl,
      backoff: { baseMs: 1, maxMs: 5 },
    });
    expect(outcome).toEqual({ delivered: false, attempts: 2, status: 404, error: 'HTTP 404' });
    expect(seen.map((h) => h.get('webhook-id'))).toEqual(['e-1', 'e-1']);
    for (const headers of seen) expect(verifyWebhookNotice(secret, headers, body)).toBe(true);
  });
});

describe('the export notice', () => {
  const ended = { exportId: 'e-1', tenantId: 't', orgId: 'o', endedAt: new Date('2026-01-01T00:00:00Z') };

  it('carries the counts and the time-limited links of a completed export', () => {
    const notice = exportNotice({
      ...ended,
      status: 'COMPLETED',
      productCount: 10,
      draftCount: 2,
      excludedCount: 3,
      download: { url: 'https://files.example.com/p.jsonl.gz?sig=x', expiresAt: new Date('2026-01-08T00:00:00Z') },
      manifestUrl: 'https://files.example.com/manifest.json?sig=y',
    });
    expect(JSON.parse(noticeBody(notice))).toEqual({
      type: 'catalog.export.completed',
      id: 'e-1',
      created_at: '2026-01-01T00:00:00.000Z',
      data: {
        export_id: 'e-1',
        tenant_id: 't',
        org_id: 'o',
        status: 'COMPLETED',
        product_count: 10,
        draft_count: 2,
        excluded_count: 3,
        download_url: 'https://files.example.com/p.jsonl.gz?sig=x',
        download_expires_at: '2026-01-08T00:00:00.000Z',
        manifest_url: 'https://files.example.com/manifest.json?sig=y',
        error: null,
      },
    });
  });

  it('carries the reason of a failed export and no link', () => {
    const notice = exportNotice({ ...ended, status: 'FAILED', error: 'object storage refused the upload' });
    expect(notice).toMatchObject({
      type: 'catalog.export.failed',
      data: {
        status: 'FAILED',
        download_url: null,
        download_expires_at: null,
        manifest_url: null,
        error: 'object storage refused the upload',
      },
    });
  });
});
