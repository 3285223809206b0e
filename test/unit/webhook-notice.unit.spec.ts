import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { exportNotice, noticeBody } from '../../adapters/notices/export-notice.ts';
import { backoffDelayMs } from '../../adapters/notices/notice-delivery.ts';
import { retryAfterMs, sendWebhookNotice, webhookSignature, webhookUrlProblem } from '../../adapters/notices/webhook-notice.ts';
import { webhookNoticeHeaders } from '../../adapters/notices/webhook-signature.ts';
import { standardWebhookVerifies as verifies } from '../support/notice-receivers.ts';

const secret = `whsec_${Buffer.from('tenant-notice-secret-of-32-bytes').toString('base64')}`;
const previousSecret = `whsec_${Buffer.from('the-previous-notice-secret-bytes').toString('base64')}`;
const body = '{"type":"catalog.export.completed"}';
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('the webhook signature', () => {
  it('matches the Standard Webhooks reference vector (standardwebhooks 1.1.1\'s own test, "sign function works")', () => {
    const signature = webhookSignature(
      ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('is v1, and the base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>" keyed by the secret\'s decoded bytes', () => {
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(`export-1.1700000000.${body}`).digest('base64');
    expect(webhookSignature([secret], 'export-1', 1_700_000_000, body)).toBe(`v1,${expected}`);
  });

  it('headers a delivery that the standardwebhooks library verifies, and refuses when the id, timestamp, body or secret differ', () => {
    const at = nowSeconds();
    const headers = webhookNoticeHeaders([secret], 'export-1', body, at);
    expect(headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'export-1', 'webhook-timestamp': String(at) });
    expect(verifies(secret, headers, body)).toBe(true);
    expect(verifies(secret, { ...headers, 'webhook-id': 'export-2' }, body)).toBe(false);
    expect(verifies(secret, { ...headers, 'webhook-timestamp': String(at - 1) }, body)).toBe(false);
    expect(verifies(secret, headers, body.replace('completed', 'failed'))).toBe(false);
    expect(verifies(previousSecret, headers, body)).toBe(false);
  });

  it('carries one signature per secret, space-separated, current first: a receiver holding either verifies', () => {
    const at = nowSeconds();
    const headers = webhookNoticeHeaders([secret, previousSecret], 'export-1', body, at);
    expect(headers['webhook-signature']).toBe(
      `${webhookSignature([secret], 'export-1', at, body)} ${webhookSignature([previousSecret], 'export-1', at, body)}`,
    );
    expect(verifies(secret, headers, body)).toBe(true);
    expect(verifies(previousSecret, headers, body)).toBe(true);
    expect(verifies(`whsec_${Buffer.from('a third secret, of nobody at all').toString('base64')}`, headers, body)).toBe(false);
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
      const outcome = await sendWebhookNotice({ url, secrets: [secret], body, id: 'e', fetchImpl });
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
      secrets: [secret],
      body,
      id: 'e-1',
      attempts: 5,
      fetchImpl,
      backoff: { baseMs: 1, maxMs: 5 },
    });
    expect(outcome).toEqual({ delivered: false, attempts: 2, status: 404, error: 'HTTP 404' });
    expect(seen.map((h) => h.get('webhook-id'))).toEqual(['e-1', 'e-1']);
    for (const headers of seen) expect(verifies(secret, Object.fromEntries(headers), body)).toBe(true);
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
