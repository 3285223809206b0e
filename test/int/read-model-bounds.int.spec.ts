import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SORT_ORDER, productDecider, type ProductCommand, type ProductEvent } from '../../commands/catalog/product.ts';
import {
  inventoryDecider,
  MAX_UNITS,
  type InventoryCommand,
  type InventoryEvent,
  type ReservationLine,
} from '../../commands/oms/inventory.ts';
import {
  MAX_LINE_QUANTITY,
  MAX_ORDER_LINES,
  orderDecider,
  type OrderCommand,
  type OrderEvent,
  type OrderLineRequest,
} from '../../commands/oms/order.ts';
import { DomainError } from '../../ledger/errors.ts';
import type { Command, Decider, Event, RecordedEvent } from '../../ledger/message.ts';
import type { Projection } from '../../ledger/projection.ts';
import { inProjectionTransaction, openProjectionTestDatabase, type ProjectionTestDatabase } from '../support/projection-transaction.ts';
import { catalogProjection } from '../../projections/catalog/catalog-projection.ts';
import { omsProjection } from '../../projections/oms/oms-projection.ts';
import { metadata } from '../support/command-metadata.ts';

/**
 * The largest values the deciders accept, decided by the deciders themselves and projected into a fresh schema
 * built from every migration (as a replay builds it): each reads back exactly, none is refused by a column.
 */
let db: Knex;
let pool: pg.Pool;
let database: ProjectionTestDatabase | undefined;
const tenantId = randomUUID();
const orgId = randomUUID();
let offset = 0;

/** Decides the commands in turn against the state their accepted events build; refused ones leave nothing. */
function decided<C extends Command, E extends Event, S>(decider: Decider<C, E, S>, commands: Omit<C, 'metadata'>[]): E[] {
  const events: E[] = [];
  let state = decider.initialState();
  for (const command of commands) {
    try {
      const next = decider.decide({ ...command, metadata } as C, state);
      state = next.reduce(decider.evolve, state);
      events.push(...next);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
    }
  }
  return events;
}

const recorded = (aggregateId: string, event: Event): RecordedEvent => ({
  ...event,
  envelope: {
    eventId: randomUUID(),
    eventType: event.type,
    aggregateId,
    tenantId,
    orgId,
    actor: { userId: null, email: null, ip: null },
    occurredAt: 1_700_000_000_000 + offset,
    correlationId: 'c',
    causationId: randomUUID(),
    schemaVersion: 1,
  },
  position: { topic: 'bounds', partition: 0, offset: String(offset++) },
});

const freshSchema = (projection: Projection) => database!.freshSchema('t_bounds', projection);

const project = (projection: Projection, schema: string, events: RecordedEvent[]) =>
  inProjectionTransaction({ db, pool }, schema, (context) => projection.handle(events, context));

beforeAll(async () => {
  database = await openProjectionTestDatabase();
  ({ db, pool } = database);
});
afterAll(() => database?.close());

describe('inventory bounds through the oms projection', () => {
  const inventoryId = randomUUID();
  const locationId = randomUUID();
  const level = (variantId: string) => ({ inventoryId, variantId, locationId });
  const lines = (variantId: string, count: number, quantity: number): ReservationLine[] =>
    Array.from({ length: count }, (_, lineIndex) => ({ lineIndex, variantId, locationId, quantity }));
  const inventory = (commands: Omit<InventoryCommand, 'metadata'>[]): RecordedEvent[] =>
    decided<InventoryCommand, InventoryEvent, ReturnType<typeof inventoryDecider.initialState>>(inventoryDecider, commands).map((e) =>
      recorded(inventoryId, e),
    );
  const levelRow = (schema: string, variantId: string) =>
    db(`${schema}.stock_levels`)
      .where({ tenant_id: tenantId, org_id: orgId, variant_id: variantId, location_id: locationId })
      .first('available', 'reserved');
  const create: Omit<InventoryCommand, 'metadata'> = { type: 'CreateStockLocation', data: { inventoryId, locationId, name: 'Main' } };

  it("the tester's scenario (10^9 available, orders of 250 × 1 000 000 units, re-stocked every round) projects, reserved ending at MAX_UNITS", async () => {
    const variantId = randomUUID();
    const orderIds = Array.from({ length: 9 }, () => randomUUID());
    const commands = orderIds.flatMap((orderId): Omit<InventoryCommand, 'metadata'>[] => [
      { type: 'SetStockLevel', data: { ...level(variantId), available: MAX_UNITS } },
      { type: 'ReserveStock', data: { inventoryId, orderId, lines: lines(variantId, 250, 1_000_000) } },
    ]);
    const events = inventory([create, ...commands]);
    const schema = await freshSchema(omsProjection);
    // Unbounded, the ninth reservation took reserved to 2.25 × 10^9 and this failed with "integer out of range".
    await project(omsProjection, schema, events);
    expect(events.filter((e) => e.type === 'StockReserved')).toHaveLength(4);
    expect(await levelRow(schema, variantId)).toEqual({ available: 0, reserved: MAX_UNITS });
    expect(await db(`${schema}.stock_reservations`).whereIn('order_id', orderIds).orderBy('order_id').pluck('status')).toEqual([
      'held',
      'held',
      'held',
      'held',
    ]);
  });

  it('the largest single reservation (one line of MAX_UNITS) is held, released and shipped exactly', async () => {
    const variantId = randomUUID();
    const [first, second] = [randomUUID(), randomUUID()];
    const all = lines(variantId, 1, MAX_UNITS);
    const schema = await freshSchema(omsProjection);
    const steps: [Omit<InventoryCommand, 'metadata'>[], { available: number; reserved: number }][] = [
      [[create, { type: 'SetStockLevel', data: { ...level(variantId), available: MAX_UNITS } }], { available: MAX_UNITS, reserved: 0 }],
      [[{ type: 'ReserveStock', data: { inventoryId, orderId: first, lines: all } }], { available: 0, reserved: MAX_UNITS }],
      [[{ type: 'ReleaseStock', data: { inventoryId, orderId: first, lines: all } }], { available: MAX_UNITS, reserved: 0 }],
      [[{ type: 'ReserveStock', data: { inventoryId, orderId: second, lines: all } }], { available: 0, reserved: MAX_UNITS }],
      [[{ type: 'ShipStock', data: { inventoryId, orderId: second, lines: all } }], { available: 0, reserved: 0 }],
    ];
    const done: Omit<InventoryCommand, 'metadata'>[] = [];
    for (const [commands, expected] of steps) {
      const before = inventory(done).length;
      done.push(...commands);
      const events = inventory(done).slice(before);
      expect(events.length, JSON.stringify(commands.map((c) => c.type))).toBe(commands.length);
      await project(omsProjection, schema, events);
      expect(await levelRow(schema, variantId)).toEqual(expected);
    }
  });
});

describe('order bounds through the oms projection', () => {
  const line: OrderLineRequest = {
    name: 'Cup',
    quantity: 1,
    unitPrice: '1.00',
    variantId: null,
    locationId: null,
    sku: null,
    variantLabel: null,
    requiresShipment: true,
  };
  const placed = (orderId: string, lines: OrderLineRequest[], taxTotal: string): RecordedEvent[] => {
    const command: Omit<OrderCommand, 'metadata'> = {
      type: 'PlaceOrder',
      data: {
        orderId,
        idempotencyKey: orderId,
        requestHash: 'h',
        currency: 'USD',
        customerId: null,
        salesChannel: null,
        platform: null,
        paymentProvider: 'manual',
        paymentTransactionId: 'tx-1',
        tags: [],
        discountTotal: '0.00',
        shippingTotal: '0.00',
        taxTotal,
        lines,
      },
    };
    const events = decided<OrderCommand, OrderEvent, ReturnType<typeof orderDecider.initialState>>(orderDecider, [
      command,
      { type: 'ConfirmOrder', data: { orderId } },
    ]);
    expect(events.map((e) => e.type)).toEqual(['OrderPlaced', 'OrderConfirmed']);
    return events.map((e) => recorded(orderId, e));
  };

  it('the largest order reads back with its exact amounts and quantities', async () => {
    const [largest, tester] = [randomUUID(), randomUUID()];
    const largestLines = Array.from({ length: MAX_ORDER_LINES }, () => ({
      ...line,
      quantity: MAX_LINE_QUANTITY - 1,
      unitPrice: '3999999.999999',
    }));
    const testerLines = Array.from({ length: MAX_ORDER_LINES }, () => ({ ...line, quantity: MAX_LINE_QUANTITY }));
    const schema = await freshSchema(omsProjection);
    await project(omsProjection, schema, [...placed(largest, largestLines, '0.000001'), ...placed(tester, testerLines, '0.00')]);

    const rows = await db(`${schema}.orders`).whereIn('id', [largest, tester]).select('id', 'status', 'subtotal', 'total', 'line_items');
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(byId.get(largest)).toMatchObject({ status: 'confirmed', subtotal: '999998999999750.00025', total: '999998999999750.000251' });
    expect(byId.get(largest).line_items).toHaveLength(MAX_ORDER_LINES);
    expect(byId.get(largest).line_items[MAX_ORDER_LINES - 1]).toMatchObject({
      quantity: 999_999,
      unitPrice: '3999999.999999',
      lineTotal: '3999995999999.000001',
    });
    expect(byId.get(tester)).toMatchObject({ status: 'confirmed', subtotal: '250000000.00', total: '250000000.00' });
    expect(byId.get(tester).line_items[0]).toMatchObject({ quantity: MAX_LINE_QUANTITY, lineTotal: '1000000.00' });
  });
});

describe('media bounds through the catalog projection', () => {
  it('sort orders at both ends of the bound read back exactly', async () => {
    const productId = randomUUID();
    const [low, high] = [randomUUID(), randomUUID()];
    const media = (mediaId: string, sortOrder: number): Omit<ProductCommand, 'metadata'> => ({
      type: 'AddMedia',
      data: { productId, mediaId, variantId: null, url: 'https://cdn.example.com/m.png', altText: null, sortOrder },
    });
    const events = decided<ProductCommand, ProductEvent, ReturnType<typeof productDecider.initialState>>(productDecider, [
      { type: 'CreateProduct', data: { productId, title: 'Mug', description: null, category: null } },
      media(low, -MAX_SORT_ORDER),
      media(high, MAX_SORT_ORDER),
    ]);
    expect(events.map((e) => e.type)).toEqual(['ProductCreated', 'MediaAdded', 'MediaAdded']);
    const schema = await freshSchema(catalogProjection);
    await project(
      catalogProjection,
      schema,
      events.map((e) => recorded(productId, e)),
    );
    expect(await db(`${schema}.media`).where({ product_id: productId }).orderBy('sort_order').select('id', 'sort_order')).toEqual([
      { id: low, sort_order: -MAX_SORT_ORDER },
      { id: high, sort_order: MAX_SORT_ORDER },
    ]);
  });
});
