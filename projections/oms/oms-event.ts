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
