import { inventoryIdOf, type InventoryEvent, type ReleaseStock, type ReserveStock, type ShipStock } from '../commands/oms/inventory.ts';
import { reservationLines, type ConfirmOrder, type OrderEvent, type RejectOrder } from '../commands/oms/order.ts';
import type { EventRoute, RoutedCommand } from '../ledger/event-router.ts';
import { topics } from '../ledger/topics.ts';

const toOrder = (orderId: string, command: Pick<ConfirmOrder | RejectOrder, 'type' | 'data'>): RoutedCommand[] => [
  { topic: topics.orderCommands, aggregateId: orderId, command },
];

const toInventory = (inventoryId: string, command: Pick<ReserveStock | ReleaseStock | ShipStock, 'type' | 'data'>): RoutedCommand[] => [
  { topic: topics.inventoryCommands, aggregateId: inventoryId, command },
];

/**
 * The order pipeline: a placed order reserves its stock (all lines in one inventory decision), the
 * reservation's outcome confirms or rejects the order, a cancellation releases the reservation and
 * a shipment takes the reserved units out of stock. The inventory decides each once per order.
 */
export const orderFulfilmentRoute: EventRoute = {
  name: 'order-fulfilment',
  topics: [topics.orderEvents, topics.inventoryEvents],
  route: (recorded) => {
    const inventoryId = inventoryIdOf(recorded.envelope.tenantId, recorded.envelope.orgId);
    const event = { type: recorded.type, data: recorded.data } as OrderEvent | InventoryEvent;
    switch (event.type) {
      case 'OrderPlaced': {
        const { orderId } = event.data;
        const lines = reservationLines(event.data.lines);
        if (lines.length === 0) return toOrder(orderId, { type: 'ConfirmOrder', data: { orderId } });
        return toInventory(inventoryId, { type: 'ReserveStock', data: { inventoryId, orderId, lines } });
      }
      case 'StockReserved':
        return toOrder(event.data.orderId, { type: 'ConfirmOrder', data: { orderId: event.data.orderId } });
      case 'StockReservationRefused': {
        const { orderId, lineIndex, variantId, locationId, requested, available, reason } = event.data;
        const message =
          reason === 'unknown_location'
            ? `line ${lineIndex}: location ${locationId} does not exist`
            : `line ${lineIndex}: ${requested} of variant ${variantId} requested at location ${locationId}, ${available} available`;
        return toOrder(orderId, { type: 'RejectOrder', data: { orderId, reason, message, lineIndex } });
      }
      case 'OrderStatusChanged': {
        const { orderId, to, reservationLines: lines = [] } = event.data;
        if (lines.length === 0) return [];
        if (to === 'cancelled') return toInventory(inventoryId, { type: 'ReleaseStock', data: { inventoryId, orderId, lines } });
        if (to === 'shipped') return toInventory(inventoryId, { type: 'ShipStock', data: { inventoryId, orderId, lines } });
        return [];
      }
      default:
        return [];
    }
  },
};
