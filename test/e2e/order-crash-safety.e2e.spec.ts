import { describe, expect, it } from 'vitest';
import { inventoryAggregate } from '../../commands/oms/inventory.ts';
import { orderAggregate } from '../../commands/oms/order.ts';
import { readEvents } from '../support/event-log.ts';
import { orderRequest, stocked, stockLevel } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

describe('order crash safety', () => {
  it('loses no acknowledged order and counts no reservation twice across a SIGKILL mid-burst', async () => {
    const stock = await stocked(ctx.tenant, 1000);
    const line = { name: 'Cup', quantity: 2, unit_price: '1.10', variant_id: stock.variantId, location_id: stock.locationId };
    const attempted: ReturnType<typeof orderRequest>[] = [];
    const acknowledged = new Map<string, string>();
    const writer = async () => {
      for (let i = 0; i < 15; i++) {
        const request = orderRequest({ line_items: [line] });
        attempted.push(request);
        const response = await ctx.tenant.request('POST', '/api/v1/oms/orders', request).catch(() => undefined);
        if (!response) return; // the service is gone; this order was never acknowledged
        if (response.status === 201) acknowledged.set(request.idempotency_key, response.body.id);
      }
    };
    const burst = Promise.all(Array.from({ length: 4 }, writer));
    while (acknowledged.size < 10) await new Promise((r) => setTimeout(r, 10));
    await ctx.service.kill();
    await burst;

    await ctx.service.restart();

    // Every acknowledged order is there, confirmed, with its reservation.
    for (const [, id] of acknowledged) {
      const read = await ctx.tenant.request('GET', `/api/v1/oms/orders/${id}`);
      expect(read.status).toBe(200);
      expect(read.body.status).toBe('confirmed');
    }
    // A client retries what was not acknowledged with the same idempotency key and gets one order each.
    const outcomes = await Promise.all(attempted.map((request) => ctx.tenant.request('POST', '/api/v1/oms/orders', request)));
    expect(outcomes.map((o) => o.status)).toEqual(attempted.map(() => 201));
    for (const [key, id] of acknowledged) expect(outcomes.find((o) => o.body.idempotency_key === key)?.body.id).toBe(id);

    const ids = outcomes.map((o) => o.body.id as string);
    expect(new Set(ids).size).toBe(attempted.length);
    const list = await ctx.tenant.request('GET', '/api/v1/oms/orders?limit=100');
    expect(list.body.total).toBe(attempted.length);

    // Exactly one reservation per order, in the log and in the levels.
    const reserved = (await readEvents(ctx.service.namespace, inventoryAggregate.events))
      .filter((e) => e.type === 'StockReserved')
      .map((e) => (e.data as { orderId: string }).orderId);
    expect(reserved.sort()).toEqual([...ids].sort());
    const placed = (await readEvents(ctx.service.namespace, orderAggregate.events))
      .filter((e) => e.type === 'OrderPlaced')
      .map((e) => e.envelope.aggregateId);
    expect(placed.sort()).toEqual([...ids].sort());
    expect(await stockLevel(ctx.tenant, stock)).toMatchObject({
      available: 1000 - 2 * ids.length,
      reserved: 2 * ids.length,
      on_hand: 1000,
    });
  });
});
