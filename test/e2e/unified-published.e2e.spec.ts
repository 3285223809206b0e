import { createHmac, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ORDER_WEBHOOKS } from '../../consumers/integrations/push-worker.ts';
import type { Tenant } from '../support/client.ts';
import { send } from '../support/client.ts';
import { connectQuietly, createProduct, eventually, remoteItemsOf, settled, useStandIn } from '../support/integrations.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

/**
 * The integrations against Unified.to as its SDK publishes it (the stand-in checks every exchange against
 * @unified-api/typescript-sdk, see test/support/unified-contract.ts): the browser's authorization flow, a product's
 * variants as itemvariants, and Unified's own webhook deliveries beside the spec's envelope.
 */
const standIn = useStandIn();
const ctx = useServiceAndTenant(() => ({
  env: { UNIFIED_API_URL: standIn.url, PUSH_LEASE_MS: '3000', WEBHOOK_SECRET_KEY: 'unified-published-e2e-key-0123456789ab' },
}));

type Order = { id: string; idempotency_key: string; currency: string; line_items: { sku: string | null; variant_id: string | null }[] };

const ordersOf = async (who: Tenant): Promise<Order[]> => {
  const response = await who.request('GET', '/api/v1/oms/orders?limit=100');
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
};

/** An `AccountingOrder` as Unified delivers it: its lines name the item, the variant and the SKU. */
const accountingOrder = (id: string, lines: { itemId?: string; variantId?: string; sku: string; quantity: number }[]) => ({
  id,
  currency: 'USD',
  status: 'OPEN',
  total_amount: lines.reduce((sum, l) => sum + 10 * l.quantity, 0),
  created_at: '2026-11-26T08:00:00.000Z',
  lineitems: lines.map((l, i) => ({
    id: `${id}-l${i}`,
    item_id: l.itemId,
    item_sku: l.sku,
    item_name: `Line ${l.sku}`,
    unit_amount: 10,
    unit_quantity: l.quantity,
    total_amount: 10 * l.quantity,
    ...(l.variantId ? { item_variants: [{ id: l.variantId }] } : {}),
  })),
});

describe("the browser's authorization flow as Unified publishes it", () => {
  it('our auth URL takes the browser through the provider to the consent and back to us, which saves the connection', async () => {
    const tenant = await ctx.newTenant();
    const asked = await tenant.request('POST', '/api/v1/integrations/auth-url?integration_type=shopify');
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    // Unified answers the URL as text unless asked to redirect: ours asks, so a browser following it is redirected.
    const atProvider = await fetch(asked.body.auth_url, { redirect: 'manual' });
    expect(atProvider.status).toBe(302);
    const consent = await fetch(atProvider.headers.get('location')!, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const back = new URL(consent.headers.get('location')!);
    expect(back.pathname).toBe('/unified/oauth/return');
    const returned = await send(ctx.service.baseUrl, 'GET', `${back.pathname}${back.search}`);
    expect(returned.status, JSON.stringify(returned.body)).toBe(200);
    expect(returned.body.connection).toMatchObject({
      provider: 'shopify',
      status: 'ACTIVE',
      unified_connection_id: back.searchParams.get('id'),
    });
  });
});

describe('a product as the platform sees it', () => {
  it('goes as one item with its prices plus one itemvariant per variant; a rename updates, a delete removes both', async () => {
    const tenant = await ctx.newTenant();
    const { id, unified } = await connectQuietly(tenant, standIn);
    const productId = await createProduct(tenant, 'Espresso cup');
    for (const [sku, price] of [
      ['CUP-RED', '12.50'],
      ['CUP-BLUE', '13.00'],
    ]) {
      const variant = await tenant.request('POST', `/api/v1/pim/products/${productId}/variants`, { sku, price, currency: 'EUR' });
      expect(variant.status, JSON.stringify(variant.body)).toBe(201);
    }
    await settled(tenant, id);
    const variantsOf = (itemId: string) => standIn.variants(unified, itemId);
    const [item] = await eventually(
      async () => remoteItemsOf(standIn, unified, productId),
      (items) => items.length === 1 && variantsOf(items[0]!.id).length === 2,
    );
    expect(item).toMatchObject({ name: 'Espresso cup', prices: [{ price: 12.5, currency: 'EUR' }] });
    expect(item).not.toHaveProperty('variants');
    expect(
      variantsOf(item!.id)
        .map((v) => ({ sku: v.sku, prices: v.prices, items: v.items }))
        .sort((a, b) => String(a.sku).localeCompare(String(b.sku))),
    ).toEqual([
      { sku: 'CUP-BLUE', prices: [{ price: 13, currency: 'EUR' }], items: [{ id: item!.id }] },
      { sku: 'CUP-RED', prices: [{ price: 12.5, currency: 'EUR' }], items: [{ id: item!.id }] },
    ]);
    const variantIds = variantsOf(item!.id)
      .map((v) => v.id)
      .sort();

    const renamed = await tenant.request('PUT', `/api/v1/pim/products/${productId}`, { title: 'Espresso cup XL' });
    expect(renamed.status).toBe(200);
    await eventually(
      async () => remoteItemsOf(standIn, unified, productId),
      (items) => items[0]?.name === 'Espresso cup XL',
    );
    await settled(tenant, id);
    // The same item and the same itemvariants, updated in place: nothing made twice.
    expect(remoteItemsOf(standIn, unified, productId).map((i) => i.id)).toEqual([item!.id]);
    expect(
      variantsOf(item!.id)
        .map((v) => v.id)
        .sort(),
    ).toEqual(variantIds);

    const deleted = await tenant.request('DELETE', `/api/v1/pim/products/${productId}`);
    expect(deleted.status).toBe(204);
    await eventually(
      async () => remoteItemsOf(standIn, unified, productId),
      (items) => items.length === 0,
    );
    await settled(tenant, id);
    expect(variantsOf(item!.id)).toEqual([]);
    expect(standIn.requests(unified).filter((r) => r.method === 'DELETE' && r.path.includes('/itemvariant/'))).toHaveLength(2);
  });

  it('subscribes only to object types of the SDK: accounting_order created and updated', async () => {
    const tenant = await ctx.newTenant();
    const { unified } = await connectQuietly(tenant, standIn);
    expect(
      standIn
        .subscriptions(unified)
        .map((s) => `${s.object_type}:${s.event}`)
        .sort(),
    ).toEqual(ORDER_WEBHOOKS.map((w) => `${w.object_type}:${w.event}`).sort());
  });
});

describe('a subscription the provider refuses', () => {
  it('shows on the connection, is tried again with backoff, and clears once it succeeds', async () => {
    const tenant = await ctx.newTenant();
    const unified = standIn.createConnection('shopify');
    standIn.refuseSubscriptions(unified, 1, 422);
    const saved = await tenant.request('POST', '/api/v1/integrations/callback', { connection_id: unified });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const id = saved.body.connection.id as string;
    const connectionOf = async () => (await tenant.request('GET', `/api/v1/integrations/connections/${id}`)).body;
    const refused = await eventually(connectionOf, (c) => c.webhook_problem !== null);
    expect(refused.webhook_problem).toMatch(/refused the accounting_order created subscription: .*422/);
    expect(refused.status).toBe('ACTIVE');
    // The next try, after the backoff, succeeds: both subscriptions made, the problem gone.
    const healed = await eventually(connectionOf, (c) => c.webhook_problem === null);
    expect(healed.webhook_problem).toBeNull();
    expect(standIn.subscriptions(unified)).toHaveLength(2);
  });
});

describe("Unified's native deliveries", () => {
  it('two new orders in one delivery become two orders; the same delivery 3× and 5× at once still two', async () => {
    const tenant = await ctx.newTenant();
    const { id, unified } = await connectQuietly(tenant, standIn);
    const productId = await createProduct(tenant, 'Teapot');
    const variant = await tenant.request('POST', `/api/v1/pim/products/${productId}/variants`, {
      sku: 'TEA-1',
      price: '10.00',
      currency: 'USD',
    });
    expect(variant.status).toBe(201);
    await settled(tenant, id);
    const [item] = await eventually(
      async () => remoteItemsOf(standIn, unified, productId),
      (items) => items.length === 1 && standIn.variants(unified, items[0]!.id).length === 1,
    );
    const remoteVariant = standIn.variants(unified, item!.id)[0]!;

    const first = `ord-${randomUUID()}`;
    const second = `ord-${randomUUID()}`;
    const delivery = {
      objectType: 'accounting_order',
      event: 'created' as const,
      type: 'VIRTUAL' as const,
      // One line by the platform's variant id (no SKU we know), one by SKU alone.
      data: [
        accountingOrder(first, [{ itemId: item!.id, variantId: remoteVariant.id, sku: 'PLATFORM-ONLY', quantity: 2 }]),
        accountingOrder(second, [{ sku: 'TEA-1', quantity: 1 }]),
      ],
      nonce: 'fixed-nonce-for-redelivery',
    };
    const [answer] = await standIn.deliver(unified, delivery);
    expect(answer?.status, answer?.body).toBe(200);
    expect(JSON.parse(answer!.body)).toEqual({ status: 'received', duplicate: false, received: 2 });

    const again = async (times: number) =>
      (await Promise.all(Array.from({ length: times }, () => standIn.deliver(unified, delivery)))).flat();
    const redeliveries = [...(await again(3)), ...(await again(5))];
    expect(redeliveries.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(redeliveries.every((r) => JSON.parse(r.body).duplicate === true)).toBe(true);
    // A retry with a fresh nonce and signature is still the same objects.
    const [fresh] = await standIn.deliver(unified, { ...delivery, nonce: undefined });
    expect(JSON.parse(fresh!.body)).toMatchObject({ duplicate: true, received: 0 });

    const mapped = await eventually(
      async () => (await ordersOf(tenant)).filter((o) => o.idempotency_key.startsWith(`unified:${unified}:`)),
      (orders) => orders.length >= 2,
    );
    expect(mapped.map((o) => o.idempotency_key).sort()).toEqual([`unified:${unified}:${first}`, `unified:${unified}:${second}`].sort());
    // Both lines matched our variant: by the platform's variant id, and by SKU.
    for (const order of mapped) expect(order.line_items.map((l) => l.sku)).toEqual([expect.stringMatching(/TEA-1|PLATFORM-ONLY/)]);
    const byVariant = mapped.find((o) => o.idempotency_key.endsWith(first))!;
    expect(byVariant.line_items[0]).toMatchObject({ sku: 'PLATFORM-ONLY' });
    const tags = (await tenant.request('GET', `/api/v1/oms/orders/${byVariant.id}`)).body.tags as string[];
    expect(tags).not.toContain('unmatched-lines');
  });

  it('a forged sig256 is 401 and stores nothing; an initial batch of existing orders maps like live ones', async () => {
    const tenant = await ctx.newTenant();
    const { unified } = await connectQuietly(tenant, standIn);
    const forged = `ord-${randomUUID()}`;
    const [refused] = await standIn.deliver(unified, {
      objectType: 'accounting_order',
      event: 'created',
      data: [accountingOrder(forged, [{ sku: 'X', quantity: 1 }])],
      sig256: createHmac('sha256', 'not-the-workspace-secret').update('x').digest('base64'),
    });
    expect(refused?.status).toBe(401);
    expect(JSON.parse(refused!.body)).toMatchObject({ error: { code: 'unauthorized' } });

    const existing = `ord-${randomUUID()}`;
    const [initial] = await standIn.deliver(unified, {
      objectType: 'accounting_order',
      event: 'created',
      type: 'INITIAL-COMPLETE',
      data: [accountingOrder(existing, [{ sku: 'X', quantity: 1 }])],
    });
    expect(initial?.status).toBe(200);
    const orders = await eventually(
      async () => (await ordersOf(tenant)).filter((o) => o.idempotency_key.startsWith(`unified:${unified}:`)),
      (found) => found.length >= 1,
    );
    expect(orders.map((o) => o.idempotency_key)).toEqual([`unified:${unified}:${existing}`]);
  });
});
