import { describe, expect, it } from 'vitest';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';
import { connect, createProduct, eventually, remoteItemsOf, settled, syncOf, useStandIn } from '../support/integrations.ts';

const standIn = useStandIn();

const ctx = useServiceAndTenant(() => ({ env: { UNIFIED_API_URL: standIn.url, PUSH_LEASE_MS: '3000' } }));

describe('background sync of a new connection', () => {
  it('subscribes to order webhooks and pushes the whole active catalog, with progress reaching the total', async () => {
    const tenant = await ctx.newTenant();
    const ids = [await createProduct(tenant, 'Mug'), await createProduct(tenant, 'Plate'), await createProduct(tenant, 'Bowl')];
    const { id, unified } = await connect(tenant, standIn);

    const status = await settled(tenant, id);
    expect(status.initial_sync).toMatchObject({ total: 3, pushed: 3, failed: 0, complete: true });
    expect(standIn.items(unified)).toHaveLength(3);
    for (const productId of ids) expect(remoteItemsOf(standIn, unified, productId)).toHaveLength(1);
    expect(
      standIn
        .items(unified)
        .map((i) => i.name)
        .sort(),
    ).toEqual(['Bowl', 'Mug', 'Plate']);

    const hooks = await eventually(
      async () => standIn.subscriptions(unified),
      (s) => s.length === 2,
    );
    expect(hooks.map((h) => `${h.object_type}:${h.event}`).sort()).toEqual(['accounting_order:created', 'accounting_order:updated']);
    expect(hooks.every((h) => h.hook_url.endsWith('/unified/webhook'))).toBe(true);
  });
});

describe('push of catalog changes', () => {
  it('creates the remote item once, then updates that same item, then deletes it', async () => {
    const tenant = await ctx.newTenant();
    const { id, unified } = await connect(tenant, standIn);
    const productId = await createProduct(tenant, 'Teapot', { sku: 'TP-1' });
    const [item] = (
      await eventually(
        async () => remoteItemsOf(standIn, unified, productId),
        (items) => items.length === 1,
      )
    ).slice();
    expect(item).toMatchObject({ name: 'Teapot', description: 'Teapot described', is_active: true });

    const updated = await tenant.request('PUT', `/api/v1/pim/products/${productId}`, { title: 'Teapot XL' });
    expect(updated.status).toBe(200);
    await eventually(
      async () => remoteItemsOf(standIn, unified, productId),
      (items) => items[0]?.name === 'Teapot XL',
    );
    expect(remoteItemsOf(standIn, unified, productId)).toEqual([expect.objectContaining({ id: item!.id, name: 'Teapot XL' })]);

    const deleted = await tenant.request('DELETE', `/api/v1/pim/products/${productId}`);
    expect(deleted.status).toBe(204);
    await eventually(
      async () => remoteItemsOf(standIn, unified, productId),
      (items) => items.length === 0,
    );
    expect((await settled(tenant, id)).items).toMatchObject({ pending: 0, retrying: 0, dead_lettered: 0 });
  });

  it('coalesces a burst of updates: the platform ends with the latest state, pushed a few times, never ten stale copies', async () => {
    const tenant = await ctx.newTenant();
    const { id, unified } = await connect(tenant, standIn);
    const productId = await createProduct(tenant, 'Kettle v0');
    await settled(tenant, id);
    standIn.resetLog();
    // A platform slower than the burst: while one push is in flight the other updates pile up behind it.
    standIn.slow(unified, 3_000);
    const updates = await Promise.all(
      Array.from({ length: 10 }, (_, i) => tenant.request('PUT', `/api/v1/pim/products/${productId}`, { title: `Kettle v${i + 1}` })),
    );
    expect(updates.map((u) => u.status)).toEqual(Array(10).fill(200));
    const latest = (await tenant.request('GET', `/api/v1/pim/products/${productId}`)).body.title;
    await eventually(
      async () => remoteItemsOf(standIn, unified, productId),
      (items) => items[0]?.name === latest,
    );
    await settled(tenant, id);
    standIn.slow(unified, 0);
    expect(remoteItemsOf(standIn, unified, productId)).toEqual([expect.objectContaining({ name: latest })]);
    const puts = standIn.requests(unified).filter((r) => r.method === 'PUT');
    // Once while the burst lands and once with its end; a third only if the burst outlasted a push (a loaded machine).
    expect(puts.length).toBeGreaterThanOrEqual(1);
    expect(puts.length).toBeLessThanOrEqual(3);
  });
});

describe('POST /unified/sync/push/product', () => {
  it('queues a push (202) that fans out to every active connection, and removes the item with DELETE', async () => {
    const tenant = await ctx.newTenant();
    const productId = await createProduct(tenant, 'Jug');
    const first = await connect(tenant, standIn);
    const second = await connect(tenant, standIn, 'woocommerce');
    await settled(tenant, first.id);
    await settled(tenant, second.id);
    standIn.resetLog();

    const pushed = await tenant.request('POST', '/unified/sync/push/product', { productId, action: 'UPSERT' });
    expect(pushed.status).toBe(202);
    expect(pushed.body).toEqual({ status: 'queued' });
    for (const { unified } of [first, second]) {
      await eventually(
        async () => standIn.requests(unified).filter((r) => r.method === 'PUT'),
        (puts) => puts.length === 1,
      );
      expect(remoteItemsOf(standIn, unified, productId)).toHaveLength(1);
    }

    const removed = await tenant.request('POST', '/unified/sync/push/product', { productId, action: 'DELETE' });
    expect(removed.status).toBe(202);
    for (const { unified } of [first, second]) {
      await eventually(
        async () => remoteItemsOf(standIn, unified, productId),
        (items) => items.length === 0,
      );
    }
  });

  it("answers 404 for another tenant's product and never pushes it to our connections", async () => {
    const tenant = await ctx.newTenant();
    const other = await ctx.newTenant();
    const { id, unified } = await connect(tenant, standIn);
    const theirs = await createProduct(other, 'Not ours');
    const refused = await tenant.request('POST', '/unified/sync/push/product', { productId: theirs, action: 'UPSERT' });
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('not_found');
    const ours = await createProduct(tenant, 'Ours');
    await eventually(
      async () => remoteItemsOf(standIn, unified, ours),
      (items) => items.length === 1,
    );
    await settled(tenant, id);
    expect(remoteItemsOf(standIn, unified, theirs)).toHaveLength(0);
    const theirSync = await other.request('GET', `/api/v1/integrations/connections/${id}/sync`);
    expect(theirSync.status).toBe(404);
  });

  it('refuses a body that is not the spec’s (400 with the error body)', async () => {
    for (const body of [
      { productId: 'nope', action: 'UPSERT' },
      { productId: crypto.randomUUID(), action: 'MERGE' },
      { productId: crypto.randomUUID() },
    ]) {
      const r = await ctx.tenant.request('POST', '/unified/sync/push/product', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('validation_failed');
    }
  });
});

export { syncOf };
