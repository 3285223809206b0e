import {
  inventoryAggregate,
  type InventoryEvent,
  type StockReleased,
  type StockReserved,
  type StockShipped,
} from '../../commands/oms/inventory.ts';
import {
  orderAggregate,
  type OrderConfirmed,
  type OrderEvent,
  type OrderRejected,
  type OrderStatusChanged,
} from '../../commands/oms/order.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { mapperOf, projectionOf, type EventHandlers, type Projection, type ProjectionContext } from '../../ledger/projection.ts';
import { knexRow } from '../record-set.ts';
import { applyOmsBatch } from './oms-batch.ts';
import { omsMigrations } from './oms-migrations.ts';
import { at, historyRow, orderMoves, placedOrder, reservationEffects, scope, type HistoryEntry } from './oms-rows.ts';

export type OmsEvent = OrderEvent | InventoryEvent;

const history = (event: RecordedEvent, { table }: ProjectionContext, entry: HistoryEntry) =>
  table('order_status_history').insert(historyRow(event, entry)).onConflict(['order_id', 'offset']).ignore();

const moveOf = mapperOf(orderMoves);

const moveOrder = async (event: RecordedEvent<OrderConfirmed | OrderRejected | OrderStatusChanged>, context: ProjectionContext) => {
  const { status, changes } = moveOf(event);
  await context
    .table('orders')
    .where({ id: event.envelope.aggregateId })
    .update(knexRow({ status, updated_at: at(event), ...changes }));
  await history(event, context, { status, outcome: 'applied' });
};

const effectOf = mapperOf(reservationEffects);

/**
 * Moves the levels of a reservation's lines by a multiple of each quantity (`available += a × q`,
 * `reserved += r × q`) and records the reservation's status.
 */
const reservation = async (
  event: RecordedEvent<StockReserved | StockReleased | StockShipped>,
  { db, schema, table }: ProjectionContext,
) => {
  const { status, a, r } = effectOf(event);
  for (const line of event.data.lines) {
    await db.raw(
      `insert into ??.stock_levels (tenant_id, org_id, variant_id, location_id, available, reserved, updated_at) values (?, ?, ?, ?, ?, ?, ?)
       on conflict (tenant_id, org_id, variant_id, location_id) do update
       set available = stock_levels.available + excluded.available, reserved = stock_levels.reserved + excluded.reserved, updated_at = excluded.updated_at`,
      [
        schema,
        event.envelope.tenantId,
        event.envelope.orgId,
        line.variantId,
        line.locationId,
        a * line.quantity,
        r * line.quantity,
        at(event),
      ],
    );
  }
  await table('stock_reservations')
    .insert({ order_id: event.data.orderId, status, updated_at: at(event) })
    .onConflict('order_id')
    .merge(['status', 'updated_at']);
};

const handlers: EventHandlers<OmsEvent> = {
  OrderPlaced: async (event, context) => {
    await context
      .table('orders')
      .insert(knexRow(placedOrder(event)))
      .onConflict('id')
      .ignore();
    await history(event, context, { status: 'pending', outcome: 'applied' });
  },
  OrderConfirmed: moveOrder,
  OrderRejected: moveOrder,
  OrderStatusChanged: moveOrder,
  OrderStatusChangeRejected: (event, context) =>
    history(event, context, {
      status: event.data.current,
      requested_status: event.data.requested,
      outcome: 'rejected',
      reason: event.data.reason,
    }),
  StockLocationCreated: (event, { table }) =>
    table('stock_locations')
      .insert({ id: event.data.locationId, ...scope(event), name: event.data.name, created_at: at(event) })
      .onConflict('id')
      .ignore(),
  StockAdjusted: (event, { table }) =>
    table('stock_levels')
      .insert({
        ...scope(event),
        variant_id: event.data.variantId,
        location_id: event.data.locationId,
        available: event.data.available,
        reserved: 0,
        updated_at: at(event),
      })
      .onConflict(['tenant_id', 'org_id', 'variant_id', 'location_id'])
      .merge(['available', 'updated_at']),
  StockReserved: reservation,
  StockReservationRefused: async () => undefined,
  StockReleased: reservation,
  StockShipped: reservation,
};

/** Orders with their status history, stock locations and stock levels, as /api/v1/oms reads them. */
export const omsProjection: Projection = projectionOf({
  name: 'oms',
  topics: [orderAggregate.events, inventoryAggregate.events],
  migrations: omsMigrations,
  handlers,
  applyBatch: applyOmsBatch,
});
