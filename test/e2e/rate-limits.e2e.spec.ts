import { createHmac, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { send, type ApiResponse, type Tenant } from '../support/client.ts';
import { submitJob } from '../support/bulk.ts';
import { connect, useStandIn } from '../support/integrations.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const WINDOW_SECONDS = 3600;
const REQUESTS = 8;
const WRITES = 4;
const WEBHOOK_ADDRESS = 3;
const WEBHOOK_CONNECTION = 2;

const standIn = useStandIn();

// Budgets small enough to spend in a few requests, over a window no test outlives: nothing here depends on timing.
const ctx = useServiceAndTenant(() => ({
  env: {
    UNIFIED_API_URL: standIn.url,
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
    RATE_LIMIT_TENANT_REQUESTS: String(REQUESTS),
    RATE_LIMIT_ORG_REQUESTS: String(REQUESTS),
    RATE_LIMIT_TENANT_WRITES: String(WRITES),
    RATE_LIMIT_ORG_WRITES: String(WRITES),
    RATE_LIMIT_WEBHOOK_ADDRESS: String(WEBHOOK_ADDRESS),
    RATE_LIMIT_WEBHOOK_CONNECTION: String(WEBHOOK_CONNECTION),
  },
}));

const expectRateLimited = (response: ApiResponse, limit: number, counts: RegExp) => {
  expect(response.status, JSON.stringify(response.body)).toBe(429);
  expect(response.body).toEqual({ error: { code: 'rate_limited', message: expect.stringMatching(counts), details: [] } });
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(Number(response.headers.get('retry-after'))).toBeLessThanOrEqual(WINDOW_SECONDS);
  expect(response.headers.get('ratelimit-limit')).toBe(String(limit));
  expect(response.headers.get('ratelimit-remaining')).toBe('0');
  expect(Number(response.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
  const policy = response.headers.get('ratelimit-policy') ?? '';
  expect(policy).toMatch(new RegExp(`^\\d+;w=${WINDOW_SECONDS}(, \\d+;w=${WINDOW_SECONDS})*$`));
  expect(policy.split(', ')).toContain(`${limit};w=${WINDOW_SECONDS}`);
};

const list = (tenant: Tenant) => tenant.request('GET', '/api/v1/pim/products');

describe('rate limits per tenant', () => {
  it('answers 429 with Retry-After, the RateLimit headers and the error body once a tenant has spent its budget', async () => {
    const tenant = await ctx.newTenant();
    for (let i = 1; i <= REQUESTS; i++) {
      const response = await list(tenant);
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-remaining')).toBe(String(REQUESTS - i));
      expect(response.headers.get('ratelimit-policy')).toBe(`${REQUESTS};w=${WINDOW_SECONDS}, ${REQUESTS};w=${WINDOW_SECONDS}`);
    }
    expectRateLimited(await list(tenant), REQUESTS, /requests of this (tenant|organization)/);
    expectRateLimited(await tenant.request('POST', '/api/v1/pim/products', { title: 'Mug' }), REQUESTS, /requests/);
  });

  it('limits one tenant while another goes on', async () => {
    const [flooding, quiet] = [await ctx.newTenant(), await ctx.newTenant()];
    for (let i = 0; i < REQUESTS; i++) expect((await list(flooding)).status).toBe(200);
    expect((await list(flooding)).status).toBe(429);
    const answered = await quiet.request('POST', '/api/v1/pim/products', { title: 'Quiet mug' });
    expect(answered.status, JSON.stringify(answered.body)).toBe(201);
    expect((await list(quiet)).status).toBe(200);
  });

  it('counts a bulk job’s items as the writes they are', async () => {
    const tenant = await ctx.newTenant();
    const job = await submitJob(tenant, 'BULK_IMPORT', [{ title: 'Bulk 1' }, { title: 'Bulk 2' }, { title: 'Bulk 3' }]);
    expect(job.status, JSON.stringify(job.body)).toBe(200);
    expect(job.headers.get('ratelimit-remaining')).toBe(String(WRITES - 3));
    expect((await tenant.request('POST', '/api/v1/pim/products', { title: 'The last write' })).status).toBe(201);
    expectRateLimited(await tenant.request('POST', '/api/v1/pim/products', { title: 'One too many' }), WRITES, /writes of this tenant/);
    // Its reads have their own budget.
    expect((await list(tenant)).status).toBe(200);
    // A job larger than the budget is refused while the budget is spent, and costs nothing then.
    expectRateLimited(await submitJob(tenant, 'BULK_IMPORT', [{ title: 'Bulk 4' }]), WRITES, /writes/);
  });

  it('never limits health, readiness or metrics', async () => {
    for (let i = 0; i < 3 * REQUESTS; i++) {
      for (const path of ['/health', '/health/live', '/health/ready', '/metrics']) {
        const response = await send(ctx.service.baseUrl, 'GET', path);
        expect(response.status, path).toBe(200);
        expect(response.headers.get('ratelimit-limit'), path).toBeNull();
      }
    }
  });
});

// One source address (this test's) throughout: the connection's budget first, while the address has spent nothing.
describe('rate limits of POST /unified/webhook', () => {
  const deliver = (raw: string, signature?: string) =>
    send(ctx.service.baseUrl, 'POST', '/unified/webhook', {
      rawBody: raw,
      headers: signature === undefined ? {} : { 'x-unified-signature': signature },
    });
  const envelope = (connectionId: string) =>
    JSON.stringify({ connection_id: connectionId, event: 'accounting.order.created', data: { id: randomUUID() } });

  const connected = async () => {
    const tenant = await ctx.newTenant();
    const { unified } = await connect(tenant, standIn);
    const { secret } = (await tenant.request<{ secret: string }>('GET', '/api/v1/integrations/webhook-secret')).body;
    return () => {
      const raw = envelope(unified);
      return deliver(raw, createHmac('sha256', secret).update(raw).digest('hex'));
    };
  };

  it('limits the verified deliveries of one connection, not another connection’s', async () => {
    const [first, second] = [await connected(), await connected()];
    for (let i = 0; i < WEBHOOK_CONNECTION; i++) {
      const response = await first();
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.headers.get('ratelimit-remaining')).toBe(String(WEBHOOK_CONNECTION - 1 - i));
    }
    expectRateLimited(await first(), WEBHOOK_CONNECTION, /deliveries of this connection/);
    expect((await second()).status).toBe(200);
  });

  it('refuses a source address that keeps sending deliveries that do not verify, signed ones from it too', async () => {
    const verified = await connected();
    for (let i = 0; i < WEBHOOK_ADDRESS; i++) expect((await deliver(envelope('no-such-connection'))).status).toBe(401);
    expectRateLimited(await deliver(envelope('no-such-connection')), WEBHOOK_ADDRESS, /unverified deliveries from this address/);
    expectRateLimited(await deliver(envelope('no-such-connection'), 'ab'.repeat(32)), WEBHOOK_ADDRESS, /address/);
    expectRateLimited(await verified(), WEBHOOK_ADDRESS, /address/);
  });
});
