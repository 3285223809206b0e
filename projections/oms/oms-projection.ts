import {
  inventoryAggregate,
  type InventoryEvent,
  type StockReleased,
  type StockReserved,
  type StockShipped,
} from '../../commands/oms/inventory.ts';
import { orderAggregate, type OrderEvent } from '../../commands/oms/order.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { projectionOf, type EventHandlers, type Projection, type ProjectionContext } from '../../ledger/projection.ts';
import { omsMigrations } from './oms-migrations.ts';

type OmsEvent = OrderEvent | InventoryEvent;

const at = (event: RecordedEvent) => new Date(event.envelope.occurredAt);
const scope = (event: RecordedEvent) => ({ tenant_id: event.envelope.tenantId, org_id: event.envelope.orgId });

const history = (
  event: RecordedEvent,
  { table }: ProjectionContext,
  row: { status: string; requested_status?: string; outcome: string; reason?: string },
) =>
  table('order_status_history')
    .insert({ order_id: event.envelope.aggregateId, offset: event.position.offset, at: at(event), ...row })
    .onConflict(['order_id', 'offset'])
    .ignore();

const moveOrder = async (event: RecordedEvent, context: ProjectionContext, status: string, changes: Record<string, unknown> = {}) => {
  await context
    .table('orders')
    .where({ id: event.envelope.aggregateId })
    .update({ status, updated_at: at(event), ...changes });
  await history(event, context, { status, outcome: 'applied' });
};

/**
 * Moves the levels of a reservation's lines by a multiple of each quantity (`available += a × q`,
 * `reserved += r × q`) and records the reservation's status.
 */
const reservation = async (
  event: RecordedEvent<StockReserved | StockReleased | StockShipped>,
  { db, schema, table }: ProjectionContext,
  status: 'held' | 'released' | 'shipped',
  a: number,
  r: number,
) => {
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
    const { data } = event;
    await context
      .table('orders')
      .insert({
        id: data.orderId,
        ...scope(event),
        status: 'pending',
        idempotency_key: data.idempotencyKey,
        currency: data.currency,
        customer_id: data.customerId,
        sales_channel: data.salesChannel,
        platform: data.platform,
        payment_provider: data.paymentProvider,
        payment_transaction_id: data.paymentTransactionId,
        payment_status: 'pending',
        subtotal: data.subtotal,
        discount_total: data.discountTotal,
        shipping_total: data.shippingTotal,
        tax_total: data.taxTotal,
        total: data.total,
        tags: JSON.stringify(data.tags),
        line_items: JSON.stringify(data.lines),
        created_at: at(event),
        updated_at: at(event),
      })
      .onConflict('id')
      .ignore();
    await history(event, context, { status: 'pending', outcome: 'applied' });
  },
  OrderConfirmed: (event, context) => moveOrder(event, context, 'confirmed', { payment_status: event.data.paymentStatus }),
  OrderRejected: (event, context) =>
    moveOrder(event, context, 'rejected', {
      payment_status: 'voided',
      rejection: JSON.stringify({ reason: event.data.reason, message: event.data.message, line_index: event.data.lineIndex }),
    }),
  OrderStatusChanged: (event, context) => moveOrder(event, context, event.data.to),
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
  StockReserved: (event, context) => reservation(event, context, 'held', -1, 1),
  StockReservationRefused: async () => undefined,
  StockReleased: (event, context) => reservation(event, context, 'released', 1, -1),
  StockShipped: (event, context) => reservation(event, context, 'shipped', 0, -1),
};

/** Orders with their status history, stock locations and stock levels, as /api/v1/oms reads them. */
export const omsProjection: Projection = projectionOf({
  name: 'oms',
  topics: [orderAggregate.events, inventoryAggregate.events],
  migrations: omsMigrations,
  handlers,
});
