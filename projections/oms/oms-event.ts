import type { RecordedEvent } from '../../ledger/message.ts';
import type { InventoryEvent } from '../../commands/oms/inventory.ts';
import type { OrderEvent } from '../../commands/oms/order.ts';

/** The events the oms read model is made of. */
export type OmsEvent = OrderEvent | InventoryEvent;

/** Each of them, spelt once, so a new order or inventory event fails to compile until the oms says it reads it. */
const omsEvents: Record<OmsEvent['type'], true> = {
  OrderPlaced: true,
  OrderConfirmed: true,
  OrderRejected: true,
  OrderStatusChanged: true,
  OrderStatusChangeRejected: true,
  OrderWithdrawn: true,
  StockLocationCreated: true,
  StockAdjusted: true,
  StockReserved: true,
  StockReservationRefused: true,
  StockReleased: true,
  StockShipped: true,
};

export const omsEventTypes = Object.keys(omsEvents) as OmsEvent['type'][];

/**
 * The order an event may settle a wait for (`Projection.awaitKeyOf`): a placed order's outcome (confirmed or
 * rejected, later moves) and its reservation, or a reservation made ahead of its order. A placement settles none: the
 * order is pending until its outcome, which comes after it in the order's partition.
 */
export function omsAwaitKeyOf(event: RecordedEvent<OmsEvent>): string | undefined {
  switch (event.type) {
    case 'OrderConfirmed':
    case 'OrderRejected':
    case 'OrderStatusChanged':
    case 'OrderStatusChangeRejected':
    case 'OrderWithdrawn':
      return event.envelope.aggregateId;
    case 'StockReserved':
    case 'StockReservationRefused':
    case 'StockReleased':
    case 'StockShipped':
      return event.data.orderId;
    case 'OrderPlaced':
    case 'StockLocationCreated':
    case 'StockAdjusted':
      return undefined;
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
}
