import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pushDeadLetterAggregate } from '../../commands/integrations/push-dead-letter.ts';
import { readEvents } from '../support/event-log.ts';
import { connectQuietly, createProduct, eventually, remoteItemsOf, settled, syncOf, useStandIn } from '../support/integrations.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const standIn = useStandIn();

// A slow connection answers after 5 s: the timeout stays above that, so its pushes succeed, only late.
const ctx = useServiceAndTenant(() => ({
  env: { UNIFIED_API_URL: standIn.url, PUSH_LEASE_MS: '2000', UNIFIED_TIMEOUT_MS: '8000' },
}));

/** `npm run dlq -- <args>` against the test service's database and broker. */
const dlq = (...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('npm', ['run', '-s', 'dlq', '--', ...args], { cwd: root, env: ctx.service.env }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });

const content = (item: Record<string, unknown>) => {
  const { id: _id, created_at: _created, updated_at: _updated, ...rest } = item;
  return rest;
};

describe('fan-out when the platforms misbehave', () => {
  it('retries a 500 and a 429 (after its Retry-After) until they converge, and marks a revoked connection AUTH_FAILED', async () => {
    const tenant = await ctx.newTenant();
    const c1 = await connectQuietly(tenant, standIn);
    const c2 = await connectQuietly(tenant, standIn, 'woocommerce');
    const c3 = await connectQuietly(tenant, standIn, 'bigcommerce');
    standIn.resetLog();
    standIn.failNext(c1.unified, 2, 500);
    standIn.rateLimitNext(c2.unified, 1, 2);
    standIn.revoke(c3.unified, 401);

    const started = Date.now();
    const productId = await createProduct(tenant, 'Saucepan', { sku: 'SP-1' });

    // c1's status shows the failed attempts while it retries.
    const retrying = await eventually(
      () => syncOf(tenant, c1.id),
      (s) => s.failures.length > 0,
      20_000,
    );
    expect(retrying.items.retrying).toBe(1);
    expect(retrying.failures[0]).toMatchObject({ product_id: productId, http_status: 500 });
    expect(retrying.failures[0].attempts).toBeGreaterThanOrEqual(1);
    expect(retrying.failures[0].next_attempt_at).not.toBeNull();
    let maxAttempts = 0;
    const c1Settled = await eventually(
      async () => {
        const s = await syncOf(tenant, c1.id);
        for (const f of s.failures) maxAttempts = Math.max(maxAttempts, f.attempts);
        return s;
      },
      (s) => s.items.synced === 1 && s.items.retrying === 0 && s.items.pending === 0,
    );
    expect(c1Settled.failures).toEqual([]);
    expect(c1Settled.dead_letters).toEqual([]);
    const c2Settled = await settled(tenant, c2.id);
    expect(c2Settled.items).toMatchObject({ synced: 1, pending: 0, retrying: 0, dead_lettered: 0 });
    const converged = Date.now() - started;

    const [one] = remoteItemsOf(standIn, c1.unified, productId);
    const [two] = remoteItemsOf(standIn, c2.unified, productId);
    expect(standIn.items(c1.unified)).toHaveLength(1);
    expect(standIn.items(c2.unified)).toHaveLength(1);
    expect(one).toMatchObject({ name: 'Saucepan', description: 'Saucepan described', is_active: true });
    expect(content(two!)).toEqual(content(one!));

    // Both 500s were answered; the item was created once, and its default itemvariant (the product's SKU) once.
    const c1Log = standIn.requests(c1.unified);
    const creates = (log: typeof c1Log, kind: string) =>
      log.filter((r) => r.method === 'POST' && r.status === 200 && r.path.endsWith(`/${kind}`));
    expect(c1Log.filter((r) => r.status === 500)).toHaveLength(2);
    expect(creates(c1Log, 'item')).toHaveLength(1);
    expect(creates(c1Log, 'itemvariant')).toHaveLength(1);

    // The attempt after the 429 came no earlier than its Retry-After (2 s).
    const c2Log = standIn.requests(c2.unified);
    const limited = c2Log.findIndex((r) => r.status === 429);
    expect(limited).toBeGreaterThanOrEqual(0);
    const next = c2Log[limited + 1];
    expect(next).toBeDefined();
    expect(next!.at - c2Log[limited]!.at).toBeGreaterThanOrEqual(2_000);
    expect(creates(c2Log, 'item')).toHaveLength(1);
    expect(creates(c2Log, 'itemvariant')).toHaveLength(1);

    // The revoked connection is AUTH_FAILED: shown as such, unlisted, and its sync says so; nothing reached it.
    const c3Status = await eventually(
      () => syncOf(tenant, c3.id),
      (s) => s.status === 'AUTH_FAILED',
    );
    expect(c3Status.status).toBe('AUTH_FAILED');
    expect(c3Status.status_reason).toMatch(/401/);
    const shown = await tenant.request('GET', `/api/v1/integrations/connections/${c3.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ id: c3.id, status: 'AUTH_FAILED' });
    const list = await tenant.request('GET', '/api/v1/integrations/connections');
    expect(list.body.connections.map((c: { id: string }) => c.id).sort()).toEqual([c1.id, c2.id].sort());
    expect(standIn.items(c3.unified)).toHaveLength(0);
    console.info(
      `fan-out: c1 converged after ${maxAttempts} failed attempts, c2 after ${next!.at - c2Log[limited]!.at} ms past its 429; both in ${converged} ms`,
    );
  });

  it('does not let a slow connection hold up a healthy one', async () => {
    const tenant = await ctx.newTenant();
    const slowOne = await connectQuietly(tenant, standIn);
    const healthy = await connectQuietly(tenant, standIn);
    standIn.resetLog();
    standIn.slow(slowOne.unified, 5_000);
    try {
      const first = await createProduct(tenant, 'Colander');
      // The slow platform has the first create (it stores before it answers) but has not answered yet.
      await eventually(
        async () => remoteItemsOf(standIn, slowOne.unified, first),
        (items) => items.length === 1,
        10_000,
      );
      const second = await createProduct(tenant, 'Ladle');
      const seen = await eventually(
        async () => remoteItemsOf(standIn, healthy.unified, second),
        (items) => items.length === 1,
        10_000,
      );
      const healthyHadBoth = Date.now();
      expect(seen).toHaveLength(1);
      expect(remoteItemsOf(standIn, healthy.unified, first)).toHaveLength(1);
      // Arrival order: both items at the healthy platform before the slow one answered its first create.
      expect(standIn.requests(slowOne.unified).filter((r) => r.method === 'POST')).toEqual([]);

      const slowSettled = await settled(tenant, slowOne.id);
      expect(slowSettled.items).toMatchObject({ synced: 2, pending: 0, retrying: 0, dead_lettered: 0 });
      const slowAnswered = standIn.requests(slowOne.unified).filter((r) => r.method === 'POST' && r.status === 200);
      expect(slowAnswered).toHaveLength(2);
      expect(Math.min(...slowAnswered.map((r) => r.at))).toBeGreaterThan(healthyHadBoth);
      expect(standIn.items(slowOne.unified)).toHaveLength(2);
      expect((await settled(tenant, healthy.id)).items).toMatchObject({ synced: 2, dead_lettered: 0 });
      expect(standIn.items(healthy.unified)).toHaveLength(2);
    } finally {
      standIn.slow(slowOne.unified, 0);
    }
  });

  it('dead-letters a push the platform refuses for good, lists it, and re-drives it with npm run dlq', async () => {
    const tenant = await ctx.newTenant();
    const c = await connectQuietly(tenant, standIn);
    standIn.resetLog();
    standIn.failNext(c.unified, 1, 422);
    const productId = await createProduct(tenant, 'Whisk');

    const status = await eventually(
      () => syncOf(tenant, c.id),
      (s) => s.dead_letters.length === 1,
      20_000,
    );
    expect(status.items).toMatchObject({ dead_lettered: 1, pending: 0, retrying: 0 });
    const [dead] = status.dead_letters;
    expect(dead).toMatchObject({ product_id: productId, http_status: 422, attempts: 1, next_attempt_at: null });
    expect(dead.reason).toMatch(/422/);
    const itemPushId: string = dead.item_push_id;
    // Not retried: one call, refused.
    expect(standIn.requests(c.unified).map((r) => r.status)).toEqual([422]);
    expect(standIn.items(c.unified)).toHaveLength(0);

    const filed = (await readEvents(ctx.service.namespace, pushDeadLetterAggregate.events)).filter(
      (e) => e.envelope.aggregateId === itemPushId,
    );
    expect(filed.map((e) => e.type)).toEqual(['PushDeadLettered']);
    expect(filed[0]!.data).toMatchObject({ itemPushId, connectionId: c.id, productId, attempts: 1, httpStatus: 422 });
    expect(filed[0]!.envelope.tenantId).toBe(tenant.tenantId);

    const listed = await dlq('list', '--json', '--tenant', tenant.tenantId);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(rows).toEqual([
      expect.objectContaining({
        item_push_id: itemPushId,
        tenant_id: tenant.tenantId,
        org_id: tenant.orgId,
        connection_id: c.id,
        product_id: productId,
        action: 'UPSERT',
        attempts: 1,
        http_status: 422,
        reason: dead.reason,
      }),
    ]);
    const table = await dlq('list', '--connection', c.id);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(itemPushId);

    // The fault was one refusal, already answered: the platform now accepts the item.
    const retried = await dlq('retry', itemPushId);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toContain(itemPushId);

    const items = await eventually(
      async () => remoteItemsOf(standIn, c.unified, productId),
      (found) => found.length === 1,
      20_000,
    );
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ name: 'Whisk' });
    const after = await settled(tenant, c.id);
    expect(after.items).toMatchObject({ synced: 1, pending: 0, retrying: 0, dead_lettered: 0 });
    expect(after.dead_letters).toEqual([]);
    expect(standIn.items(c.unified)).toHaveLength(1);
    expect(standIn.requests(c.unified).filter((r) => r.method === 'POST')).toHaveLength(2);

    const empty = await dlq('list', '--json', '--tenant', tenant.tenantId);
    expect(empty.code, empty.stderr).toBe(0);
    expect(JSON.parse(empty.stdout)).toEqual([]);
    const cleared = await eventually(
      async () =>
        (await readEvents(ctx.service.namespace, pushDeadLetterAggregate.events)).filter((e) => e.envelope.aggregateId === itemPushId),
      (events) => events.length === 2,
      10_000,
    );
    expect(cleared.map((e) => e.type)).toEqual(['PushDeadLettered', 'DeadLetterRedriven']);

    // A second re-drive of the same id finds nothing dead-lettered: a failure, and nothing sent.
    const again = await dlq('retry', itemPushId);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not dead-lettered/);
  });

  it('refuses a usage error with exit code 2 and the usage text', async () => {
    const cases = [['purge'], ['retry', '--all', crypto.randomUUID()], ['list', '--tenant', 'x']];
    for (const args of cases) {
      const r = await dlq(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/usage: npm run dlq/);
    }
  });

  it('finds the item a lost create answer left behind instead of creating it again', async () => {
    const tenant = await ctx.newTenant();
    const c = await connectQuietly(tenant, standIn);
    standIn.resetLog();
    standIn.loseNextCreateResponse(c.unified);
    const productId = await createProduct(tenant, 'Sieve');

    const status = await eventually(
      () => syncOf(tenant, c.id),
      (s) => s.items.synced === 1,
      20_000,
    );
    expect(status.items).toMatchObject({ synced: 1, pending: 0, retrying: 0, dead_lettered: 0 });
    expect(remoteItemsOf(standIn, c.unified, productId)).toHaveLength(1);
    expect(standIn.items(c.unified)).toHaveLength(1);
    const log = standIn.requests(c.unified);
    // The create landed unanswered (0), the retry looked the item up, and no second create was made.
    expect(log.filter((r) => r.method === 'POST').map((r) => r.status)).toEqual([0]);
    expect(log.some((r) => r.method === 'GET' && r.status === 200)).toBe(true);
  });
});
