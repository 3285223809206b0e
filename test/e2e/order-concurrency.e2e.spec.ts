import { describe, expect, it } from 'vitest';
import { inventoryAggregate } from '../../commands/oms/inventory.ts';
import { orderAggregate } from '../../commands/oms/order.ts';
import { readEvents } from '../support/event-log.ts';
import { orderRequest, stocked, stockLevel } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

describe('orders under concurrency', () => {
  it('confirms exactly 10 of 50 concurrent orders for the last 10 units', async () => {
    const stock = await stocked(ctx.tenant, 10);
    const line = { name: 'Last units', quantity: 1, unit_price: '9.99', variant_id: stock.variantId, location_id: stock.locationId };
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => ctx.tenant.request('POST', '/api/v1/oms/orders', orderRequest({ line_items: [line] }))),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 409)).toHaveLength(40);
    for (const refused of responses.filter((r) => r.status === 409)) expect(refused.body.error.details[0].path).toBe('body.line_items.0');
    expect(await stockLevel(ctx.tenant, stock)).toMatchObject({ available: 0, reserved: 10, on_hand: 10 });

    const list = await ctx.tenant.request('GET', '/api/v1/oms/orders?limit=100');
    const confirmed = list.body.data.filter((o: { status: string }) => o.status === 'confirmed').map((o: { id: string }) => o.id);
    expect(confirmed.sort()).toEqual(
      responses
        .filter((r) => r.status === 201)
        .map((r) => r.body.id)
        .sort(),
    );
  });

  it('makes one order and one reservation of 20 concurrent submissions with one idempotency key', async () => {
    const stock = await stocked(ctx.tenant, 10);
    const request = orderRequest({
      line_items: [{ name: 'Cup', quantity: 3, unit_price: 2, variant_id: stock.variantId, location_id: stock.locationId }],
    });
    const responses = await Promise.all(Array.from({ length: 20 }, () => ctx.tenant.request('POST', '/api/v1/oms/orders', request)));
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 201));
    const first = responses[0]?.body;
    for (const response of responses) expect(response.body).toEqual(first);
    expect(await stockLevel(ctx.tenant, stock)).toMatchObject({ available: 7, reserved: 3 });

    const orderEvents = (await readEvents(ctx.service.namespace, orderAggregate.events)).filter((e) => e.envelope.aggregateId === first.id);
    expect(orderEvents.map((e) => e.type)).toEqual(['OrderPlaced', 'OrderConfirmed']);
    const reserved = (await readEvents(ctx.service.namespace, inventoryAggregate.events)).filter(
      (e) => e.type === 'StockReserved' && (e.data as { orderId: string }).orderId === first.id,
    );
    expect(reserved).toHaveLength(1);
  });
});
