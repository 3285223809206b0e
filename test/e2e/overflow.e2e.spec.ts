import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_UNITS } from '../../commands/oms/inventory.ts';
import type { Tenant } from '../support/client.ts';
import { eventually, orderRequest, stocked, stockLevel } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

/**
 * Issue 8, item 4: `reserved` is a 32-bit integer in the read model. Re-stocking 10^9 units and ordering
 * 250 lines × 1 000 000 units of them, the ninth order took it past 2^31 − 1; the projection then retried that
 * event forever and every tenant's inventory and order writes answered 503.
 */
const ctx = useServiceAndTenant();
let tester: Tenant;
let other: Tenant;

beforeAll(async () => {
  tester = ctx.tenant;
  other = await ctx.newTenant();
});

type Order = { id: string; status: string; line_items: { quantity: number; variant_id: string | null }[] };

describe('quantities and amounts past the read model', () => {
  it("refuses the tester's overflow with 4xx, and every tenant's writes still succeed", async () => {
    const location = await tester.request('POST', '/api/v1/oms/inventory/locations', { name: 'Bulk warehouse' });
    expect(location.status).toBe(201);
    const stock = { variantId: randomUUID(), locationId: location.body.id as string };
    const levelPath = `/api/v1/oms/inventory/levels/${stock.variantId}/${stock.locationId}`;
    const bulkLine = { name: 'Bulk', quantity: 1_000_000, unit_price: '1.00', variant_id: stock.variantId, location_id: stock.locationId };
    const bulkOrder = () => orderRequest({ line_items: Array.from({ length: 250 }, () => bulkLine) });

    const restocks: { status: number; body: any }[] = [];
    const orders: { status: number; body: any }[] = [];
    for (let round = 1; round <= 9; round++) {
      restocks.push(await tester.request('PUT', levelPath, { available: MAX_UNITS }));
      orders.push(await tester.request('POST', '/api/v1/oms/orders', bulkOrder()));
    }
    expect([...restocks, ...orders].filter((r) => r.status >= 500).map((r) => r.body)).toEqual([]);
    // available + reserved stays at most 10^9: the first set fills it, four orders reserve it, nothing refills it.
    expect(restocks.map((r) => r.status)).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409]);
    expect(orders.map((r) => r.status)).toEqual([201, 201, 201, 201, 409, 409, 409, 409, 409]);
    expect(restocks[1]?.body.error.details).toEqual([
      { path: 'body.available', message: '250000000 reserved, so at most 750000000 available' },
    ]);
    expect(orders[4]?.body.error.details[0].path).toBe('body.line_items.0');
    expect(await stockLevel(tester, stock)).toMatchObject({ available: 0, reserved: MAX_UNITS, on_hand: MAX_UNITS });

    const raise = await tester.request('POST', `${levelPath}/adjustments`, { delta: 1 });
    expect(raise.status).toBe(409);

    // The other tenant's inventory and order writes go through.
    const theirs = await stocked(other, 5);
    const adjusted = await other.request('POST', `/api/v1/oms/inventory/levels/${theirs.variantId}/${theirs.locationId}/adjustments`, {
      delta: 1,
    });
    expect(adjusted.status).toBe(200);
    const theirOrder = await other.request(
      'POST',
      '/api/v1/oms/orders',
      orderRequest({
        line_items: [{ name: 'Cup', quantity: 2, unit_price: '9.99', variant_id: theirs.variantId, location_id: theirs.locationId }],
      }),
    );
    expect(theirOrder.status).toBe(201);
    expect(await stockLevel(other, theirs)).toMatchObject({ available: 4, reserved: 2, on_hand: 6 });

    // The tester's read model agrees with itself: reserved is the units of the confirmed orders.
    const list = await tester.request('GET', '/api/v1/oms/orders?limit=100');
    expect(list.status).toBe(200);
    const confirmed = (list.body.data as Order[]).filter((o) => o.status === 'confirmed');
    expect(confirmed.map((o) => o.id).sort()).toEqual(
      orders
        .filter((r) => r.status === 201)
        .map((r) => r.body.id)
        .sort(),
    );
    const units = confirmed
      .flatMap((o) => o.line_items)
      .filter((l) => l.variant_id === stock.variantId)
      .reduce((sum, l) => sum + l.quantity, 0);
    expect(units).toBe(MAX_UNITS);
    expect((list.body.data as Order[]).filter((o) => o.status === 'rejected')).toHaveLength(5);

    // The tester goes on too: cancelling one order makes its units available to the next.
    const cancelled = await tester.request('POST', `/api/v1/oms/orders/${confirmed[0]?.id}/status`, { status: 'cancelled' });
    expect(cancelled.status).toBe(202);
    const released = await eventually(
      () => stockLevel(tester, stock),
      (level) => level.reserved < MAX_UNITS,
    );
    expect(released).toMatchObject({ available: 250_000_000, reserved: 750_000_000, on_hand: MAX_UNITS });
    expect((await tester.request('POST', '/api/v1/oms/orders', bulkOrder())).status).toBe(201);
    expect(await stockLevel(tester, stock)).toMatchObject({ available: 0, reserved: MAX_UNITS, on_hand: MAX_UNITS });
  });

  it('refuses an order whose amounts would pass 10^15 with 400, writing nothing', async () => {
    const stock = await stocked(tester, 1_000);
    const line = { name: 'Gold', quantity: 1_000, unit_price: '999999999999', variant_id: stock.variantId, location_id: stock.locationId };
    const overLimit = await tester.request('POST', '/api/v1/oms/orders', orderRequest({ line_items: [line, { ...line, quantity: 1 }] }));
    expect(overLimit.status).toBe(400);
    expect(overLimit.body.error.details.map((d: { path: string }) => d.path)).toEqual(['body.line_items', 'body']);
    expect(await stockLevel(tester, stock)).toMatchObject({ available: 1_000, reserved: 0 });

    const justUnder = await tester.request('POST', '/api/v1/oms/orders', orderRequest({ line_items: [line] }));
    expect(justUnder.status).toBe(201);
    expect(justUnder.body).toMatchObject({ subtotal: '999999999999000.00', total: '999999999999000.00' });
  });
});
