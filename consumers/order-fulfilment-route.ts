import { inventoryAggregate, inventoryIdOf, type InventoryCommand, type InventoryEvent } from '../commands/oms/inventory.ts';
import { orderAggregate, reservationLines, type OrderCommand, type OrderEvent } from '../commands/oms/order.ts';
import { routeTo, type EventRoute, type RoutedCommand } from '../ledger/event-router.ts';
import type { CommandInput } from '../ledger/message.ts';

const toOrder = (command: CommandInput<OrderCommand>): RoutedCommand[] => [routeTo(orderAggregate, command)];

const toInventory = (command: CommandInput<InventoryCommand>): RoutedCommand[] => [routeTo(inventoryAggregate, command)];

/**
 * The order pipeline: a placed order reserves its stock (all lines in one inventory decision), the
 * reservation's outcome confirms or rejects the order, a cancellation releases the reservation and
 * a shipment takes the reserved units out of stock, a withdrawn order id (a checkout's completion given up before
 * its order was placed) releases what was reserved ahead for it. The inventory decides each once per order.
 */
export const orderFulfilmentRoute: EventRoute = {
  name: 'order-fulfilment',
  topics: [orderAggregate.events, inventoryAggregate.events],
  route: (recorded) => {
    const inventoryId = inventoryIdOf(recorded.envelope.tenantId, recorded.envelope.orgId);
    const event = { type: recorded.type, data: recorded.data } as OrderEvent | InventoryEvent;
    switch (event.type) {
      case 'OrderPlaced': {
        const { orderId } = event.data;
        const lines = reservationLines(event.data.lines);
        // Stock reserved ahead under the order's id (an agentic checkout) is already held: nothing to reserve again.
        if (lines.length === 0 || event.data.reservedAhead) return toOrder({ type: 'ConfirmOrder', data: { orderId } });
        return toInventory({ type: 'ReserveStock', data: { inventoryId, orderId, lines } });
      }
      case 'StockReserved':
        // Reserved ahead of its order: the order, placed next, is confirmed from its own OrderPlaced.
        if (event.data.reservedAhead) return [];
        return toOrder({ type: 'ConfirmOrder', data: { orderId: event.data.orderId } });
      case 'StockReservationRefused': {
        // Refused ahead of an order: no order exists, and none is placed.
        if (event.data.reservedAhead) return [];
        const { orderId, lineIndex, variantId, locationId, requested, available, reason } = event.data;
        const message =
          reason === 'unknown_location'
            ? `line ${lineIndex}: location ${locationId} does not exist`
            : `line ${lineIndex}: ${requested} of variant ${variantId} requested at location ${locationId}, ${available} available`;
        return toOrder({ type: 'RejectOrder', data: { orderId, reason, message, lineIndex } });
      }
      case 'OrderStatusChanged': {
        const { orderId, to, reservationLines: lines = [] } = event.data;
        if (lines.length === 0) return [];
        if (to === 'cancelled') return toInventory({ type: 'ReleaseStock', data: { inventoryId, orderId, lines } });
        if (to === 'shipped') return toInventory({ type: 'ShipStock', data: { inventoryId, orderId, lines } });
        return [];
      }
      case 'OrderWithdrawn': {
        // A checkout's completion gave up the order before placing it: the stock reserved ahead for it is released, once.
        const { orderId, reservationLines: lines } = event.data;
        if (lines.length === 0) return [];
        return toInventory({ type: 'ReleaseStock', data: { inventoryId, orderId, lines } });
      }
      default:
        return [];
    }
  },
};
