import { randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeLedger, type SentCommand } from '../support/fake-ledger.ts';
import { newCaller, routeApp, type Caller } from '../support/route-app.ts';

const WINDOW_SECONDS = 3600;

let app: FastifyInstance;
let ledger: FakeLedger;

beforeAll(async () => {
  ({ app, ledger } = await routeApp(new FakeLedger(), {
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
    RATE_LIMIT_TENANT_REQUESTS: '4',
    RATE_LIMIT_ORG_REQUESTS: '3',
    RATE_LIMIT_TENANT_WRITES: '6',
    RATE_LIMIT_ORG_WRITES: '6',
    RATE_LIMIT_TENANT_IN_FLIGHT: '2',
    RATE_LIMIT_TENANT_QUEUED: '1',
    // Each test's tenants stop counting as busy once answered, so they take no part of the next test's budget.
    RATE_LIMIT_TENANT_BUSY_MS: '1',
    BULK_MAX_ITEMS: '50',
  }));
});
afterAll(() => app.close());
/** A submitted bulk job shows in the read model; every other command is accepted. */
const projectSubmission = (command: SentCommand) => {
  if (command.type !== 'SubmitBulkJob') return {};
  const { jobId: id, jobType: job_type } = command.data;
  const at = new Date();
  const [tenant_id, org_id] = [command.tenantId, command.orgId];
  const nulls = { total_items: null, processed_items: null, failed_items: null, created_by: null };
  return { rows: { jobs: [{ id, tenant_id, org_id, job_type, status: 'PENDING', ...nulls, created_at: at, updated_at: at }] } };
};

beforeEach(() => ledger.reset(projectSubmission, 'products', 'jobs'));

/** Resolves once the fake ledger has been sent `count` commands (admitted writes; held ones stay in progress). */
const sentCommands = async (count: number): Promise<void> => {
  while (ledger.sent.length < count) await new Promise((resolve) => setImmediate(resolve));
};

const list = (caller: Caller) => app.inject({ method: 'GET', url: '/api/v1/pim/products', headers: caller.headers });
/** A write the fake ledger accepts: 204. */
const write = (caller: Caller) => app.inject({ method: 'DELETE', url: `/api/v1/pim/products/${randomUUID()}`, headers: caller.headers });
const bulkImport = (caller: Caller, count: number) =>
  app.inject({
    method: 'POST',
    url: '/api/v1/pim/bulk-jobs',
    headers: caller.headers,
    payload: { job_type: 'BULK_IMPORT', payload: Array.from({ length: count }, (_, i) => ({ title: `Mug ${i}` })) },
  });

function expectRateLimited(response: LightMyRequestResponse, limit: number): void {
  expect(response.statusCode).toBe(429);
  expect(response.json()).toEqual({ error: { code: 'rate_limited', message: expect.any(String), details: [] } });
  const retryAfter = Number(response.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(4 * WINDOW_SECONDS);
  expect(response.headers['ratelimit-limit']).toBe(String(limit));
  expect(response.headers['ratelimit-remaining']).toBe('0');
  expect(Number(response.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
  expect(response.headers['ratelimit-policy']).toMatch(/^\d+;w=3600(, \d+;w=3600)*$/);
}

describe('rate limits per tenant and organization', () => {
  it('answers within the budget with the RateLimit headers, then 429 with Retry-After and the error body', async () => {
    const caller = await newCaller();
    const answers = [await list(caller), await list(caller), await list(caller)];
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(answers.map((r) => r.headers['ratelimit-remaining'])).toEqual(['2', '1', '0']);
    expect(answers[0]?.headers['ratelimit-policy']).toBe('4;w=3600, 3;w=3600');
    expectRateLimited(await list(caller), 3);
  });

  it('limits one organization while the same tenant’s other organization and another tenant go on', async () => {
    const caller = await newCaller();
    for (let i = 0; i < 3; i++) expect((await list(caller)).statusCode).toBe(200);
    expectRateLimited(await list(caller), 3);
    const otherOrg = await newCaller({ tenantId: caller.tenantId });
    expect((await list(otherOrg)).statusCode).toBe(200);
    // The tenant's own budget (4) is spent now: its every organization waits.
    expectRateLimited(await list(otherOrg), 4);
    expect((await list(await newCaller())).statusCode).toBe(200);
  });

  it('counts a bulk job’s items as writes: after a job of 5, one write is left', async () => {
    const caller = await newCaller();
    const job = await bulkImport(caller, 5);
    expect(job.statusCode).toBe(200);
    expect(job.headers['ratelimit-remaining']).toBe('1');
    expect((await write(caller)).statusCode).toBe(204);
    const refused = await write(caller);
    expectRateLimited(refused, 6);
    expect(refused.json().error.message).toMatch(/writes of this tenant/);
  });

  it('takes a bulk job larger than what is left, and refuses the writes after it', async () => {
    const caller = await newCaller();
    expect((await write(caller)).statusCode).toBe(204);
    const job = await bulkImport(caller, 20);
    expect(job.statusCode).toBe(200);
    const refused = await write(caller);
    expectRateLimited(refused, 6);
    // 21 writes of a budget of 6 per hour: the next window pays 6 of them, the one after 6, and so on.
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(2 * WINDOW_SECONDS);
  });

  it('lets a tenant’s requests beyond those in progress wait their turn, refuses any beyond the line, and not another tenant’s', async () => {
    const caller = await newCaller();
    let release = () => {};
    ledger.held = new Promise<void>((resolve) => (release = resolve));
    const running = [write(caller), write(caller)];
    await sentCommands(2);
    // Of the next two, one waits for a slot (it cannot be answered before the held ones are) and one is refused.
    const next = [write(caller), write(caller)];
    const refused = await Promise.race(next);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.message).toMatch(/requests in progress and 1 waiting/);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['ratelimit-policy']).toBeDefined();
    const other = await newCaller();
    const others = [write(other), write(other)];
    release();
    const answered = await Promise.all([...running, ...next, ...others]);
    expect(answered.map((r) => r.statusCode).sort()).toEqual([204, 204, 204, 204, 204, 429]);
    // Its slots are free again (its organization's budget of 3 is spent: another of its organizations asks).
    expect((await list(await newCaller({ tenantId: caller.tenantId }))).statusCode).toBe(200);
  });

  it('holds a tenant to its share of the requests in progress while another tenant is busy', async () => {
    const [quiet, flood] = [await newCaller(), await newCaller()];
    let release = () => {};
    ledger.held = new Promise<void>((resolve) => (release = resolve));
    const quietWrite = write(quiet);
    await sentCommands(1);
    // Two busy tenants split the budget of 2: of the flood's three writes one runs, one waits (where alone it would have
    // run) and one finds the line of one full, at once. Which is which depends on the order they reach the admission,
    // so the race is over all three: the held one and the waiting one cannot answer before the release.
    const floodWrites = [write(flood), write(flood), write(flood)];
    const refused = await Promise.race(floodWrites);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.message).toMatch(/has 1 requests in progress and 1 waiting/);
    expect(ledger.sent.map((command) => command.tenantId)).toEqual([quiet.tenantId, flood.tenantId]);
    release();
    const answered = await Promise.all([quietWrite, ...floodWrites]);
    expect(answered.map((r) => r.statusCode).sort()).toEqual([204, 204, 204, 429]);
  });

  it('never limits health, readiness or metrics, and gives them no RateLimit headers', async () => {
    for (let i = 0; i < 10; i++) {
      for (const url of ['/health', '/health/live', '/health/ready', '/metrics']) {
        const response = await app.inject({ method: 'GET', url });
        expect(response.statusCode).toBe(200);
        expect(response.headers['ratelimit-limit']).toBeUndefined();
      }
    }
  });

  it('declares 429 with its headers on every authenticated operation', async () => {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const operations = Object.values(document.paths as Record<string, Record<string, any>>).flatMap((item) => Object.values(item));
    const authenticated = operations.filter((operation) => !Array.isArray(operation.security) || operation.security.length > 0);
    expect(authenticated.length).toBeGreaterThan(20);
    for (const operation of authenticated) {
      expect(Object.keys(operation.responses['429'].headers).sort()).toEqual(
        ['RateLimit-Limit', 'RateLimit-Policy', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After'].sort(),
      );
    }
    expect(document.paths['/unified/webhook'].post.responses['429'].headers['Retry-After'].required).toBe(true);
  });
});
