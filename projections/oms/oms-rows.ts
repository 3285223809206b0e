import type { StockReleased, StockReserved, StockShipped } from '../../commands/oms/inventory.ts';
import type { OrderConfirmed, OrderPlaced, OrderRejected, OrderStatusChanged } from '../../commands/oms/order.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import type { EventMappers } from '../../ledger/projection.ts';

export const at = (event: RecordedEvent) => new Date(event.envelope.occurredAt);
export const scope = (event: RecordedEvent) => ({ tenant_id: event.envelope.tenantId, org_id: event.envelope.orgId });

export const placedOrder = (event: RecordedEvent<OrderPlaced>) => {
  const { data } = event;
  return {
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
    tags: data.tags,
    line_items: data.lines,
    created_at: at(event),
    updated_at: at(event),
  };
};

export type HistoryEntry = { status: string; requested_status?: string; outcome: string; reason?: string };

/** Events of one order share a partition, so (order, offset) is the entry's identity. */
export const historyRow = (event: RecordedEvent, entry: HistoryEntry) => ({
  order_id: event.envelope.aggregateId,
  offset: event.position.offset,
  at: at(event),
  status: entry.status,
  requested_status: entry.requested_status ?? null,
  outcome: entry.outcome,
  reason: entry.reason ?? null,
});

/** A move of an order: its new status and what else the move sets (the order is `envelope.aggregateId`). */
export type OrderMove = { status: string; changes: { payment_status?: string; rejection?: Record<string, unknown> } };

export const orderMoves: EventMappers<OrderConfirmed | OrderRejected | OrderStatusChanged, OrderMove> = {
  OrderConfirmed: (event) => ({ status: 'confirmed', changes: { payment_status: event.data.paymentStatus } }),
  OrderRejected: (event) => ({
    status: 'rejected',
    changes: {
      payment_status: 'voided',
      rejection: { reason: event.data.reason, message: event.data.message, line_index: event.data.lineIndex },
    },
  }),
  OrderStatusChanged: (event) => ({ status: event.data.to, changes: {} }),
};

/**
 * What a reservation's event does: the status it records, and by which multiple of each line's quantity the
 * level's available (`a`) and reserved (`r`) units move.
 */
export type ReservationEffect = { status: 'held' | 'released' | 'shipped'; a: number; r: number };

export const reservationEffects: EventMappers<StockReserved | StockReleased | StockShipped, ReservationEffect> = {
  StockReserved: () => ({ status: 'held', a: -1, r: 1 }),
  StockReleased: () => ({ status: 'released', a: 1, r: -1 }),
  StockShipped: () => ({ status: 'shipped', a: 0, r: -1 }),
};
