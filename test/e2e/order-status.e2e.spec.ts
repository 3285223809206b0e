import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import knexFactory from 'knex';
import { describe, expect, it } from 'vitest';
import { inventoryAggregate } from '../../commands/oms/inventory.ts';
import { readEvents } from '../support/event-log.ts';
import { eventually, orderRequest, stocked, stockLevel } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

type History = { status: string; requested_status: string | null; outcome: string }[];

const read = async (id: string) => (await ctx.tenant.request('GET', `/api/v1/oms/orders/${id}`)).body;
const request = async (id: string, status: string) => {
  const response = await ctx.tenant.request('POST', `/api/v1/oms/orders/${id}/status`, { status });
  expect(response.status).toBe(202);
  expect(response.body).toEqual({ order_id: id, requested_status: status });
};
/** Waits until the order's history has `entries` entries: every request so far has been decided. */
const settled = (id: string, entries: number) =>
  eventually(
    () => read(id),
    (order) => (order.status_history as History).length >= entries,
  );

const placeStocked = async (quantity: number) => {
  const stock = await stocked(ctx.tenant, 10);
  const line = { name: 'Cup', quantity, unit_price: 5, variant_id: stock.variantId, location_id: stock.locationId };
  const created = await ctx.tenant.request('POST', '/api/v1/oms/orders', orderRequest({ line_items: [line] }));
  expect(created.status).toBe(201);
  return { stock, order: created.body };
};

describe('order status', () => {
  it('walks the lifecycle confirmed → processing → shipped → delivered; shipping takes the reserved units out of stock', async () => {
    const { stock, order } = await placeStocked(4);
    await request(order.id, 'processing');
    const processing = await settled(order.id, 3);
    expect(processing.status).toBe('processing');
    expect(Date.parse(processing.updated_at)).toBeGreaterThanOrEqual(Date.parse(order.updated_at));

    await request(order.id, 'processing');
    await request(order.id, 'shipped');
    const shipped = await settled(order.id, 4);
    expect(shipped.status).toBe('shipped');
    expect(
      await eventually(
        () => stockLevel(ctx.tenant, stock),
        (level) => level.reserved === 0,
      ),
    ).toMatchObject({ available: 6, reserved: 0, on_hand: 6 });

    await request(order.id, 'delivered');
    const delivered = await settled(order.id, 5);
    expect((delivered.status_history as History).map((h) => h.status)).toEqual([
      'pending',
      'confirmed',
      'processing',
      'shipped',
      'delivered',
    ]);
  });

  it('refuses skipping and going back, visibly, without changing the order', async () => {
    const { order } = await placeStocked(1);
    await request(order.id, 'shipped');
    const refused = await settled(order.id, 3);
    expect(refused.status).toBe('confirmed');
    expect(refused.updated_at).toBe(order.updated_at);
    expect(refused.status_history[2]).toMatchObject({
      status: 'confirmed',
      requested_status: 'shipped',
      outcome: 'rejected',
      reason: 'cannot move from confirmed to shipped',
    });

    await request(order.id, 'processing');
    await request(order.id, 'shipped');
    await request(order.id, 'processing');
    await request(order.id, 'cancelled');
    const final = await settled(order.id, 7);
    expect(final.status).toBe('shipped');
    expect((final.status_history as History).slice(3).map((h) => [h.status, h.outcome])).toEqual([
      ['processing', 'applied'],
      ['shipped', 'applied'],
      ['shipped', 'rejected'],
      ['shipped', 'rejected'],
    ]);

    for (const invalid of [{ status: 'confirmed' }, { status: 'pending' }, { status: 'lost' }, {}]) {
      expect((await ctx.tenant.request('POST', `/api/v1/oms/orders/${order.id}/status`, invalid)).status).toBe(400);
    }
  });

  it('releases the reservation exactly once when a cancel is sent twice', async () => {
    const { stock, order } = await placeStocked(3);
    expect(await stockLevel(ctx.tenant, stock)).toMatchObject({ available: 7, reserved: 3 });
    await Promise.all([request(order.id, 'cancelled'), request(order.id, 'cancelled')]);
    const cancelled = await eventually(
      () => read(order.id),
      (o) => o.status === 'cancelled',
    );
    expect(cancelled.status).toBe('cancelled');
    await request(order.id, 'cancelled');
    await request(order.id, 'processing');
    await settled(order.id, 4);
    expect(
      await eventually(
        () => stockLevel(ctx.tenant, stock),
        (level) => level.reserved === 0,
      ),
    ).toMatchObject({ available: 10, reserved: 0, on_hand: 10 });

    const released = (await readEvents(ctx.service.namespace, inventoryAggregate.events)).filter(
      (e) => e.type === 'StockReleased' && (e.data as { orderId: string }).orderId === order.id,
    );
    expect(released).toHaveLength(1);
    expect((await stockLevel(ctx.tenant, stock)).available).toBe(10);
  });

  it('cancels from processing too', async () => {
    const { stock, order } = await placeStocked(2);
    await request(order.id, 'processing');
    await request(order.id, 'cancelled');
    expect(
      (
        await eventually(
          () => read(order.id),
          (o) => o.status === 'cancelled',
        )
      ).status,
    ).toBe('cancelled');
    expect(
      await eventually(
        () => stockLevel(ctx.tenant, stock),
        (level) => level.available === 10,
      ),
    ).toMatchObject({ available: 10, reserved: 0 });
  });

  it('rebuilds the order and inventory read model from offset 0 into the same rows', async () => {
    const db = knexFactory({ client: 'pg', connection: ctx.service.databaseUrl });
    try {
      const snapshot = async () => ({
        orders: await db('rm_oms.orders').orderBy('id'),
        history: await db('rm_oms.order_status_history').orderBy(['order_id', 'offset']),
        reservations: await db('rm_oms.stock_reservations').orderBy('order_id'),
        locations: await db('rm_oms.stock_locations').orderBy('id'),
        levels: await db('rm_oms.stock_levels').orderBy(['tenant_id', 'org_id', 'variant_id', 'location_id']),
      });
      const before = await snapshot();
      expect(before.orders.length).toBeGreaterThanOrEqual(4);
      const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
      const result = await promisify(execFile)(join(root, 'node_modules', '.bin', 'tsx'), [join(root, 'bin', 'replay.ts'), 'oms'], {
        env: ctx.service.env,
        timeout: 120_000,
      });
      expect(result.stdout).toMatch(/oms: rebuilt into rm_oms/);
      expect(await snapshot()).toEqual(before);
    } finally {
      await db.destroy();
    }
  });
});
