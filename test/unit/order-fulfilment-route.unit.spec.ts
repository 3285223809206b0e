import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inventoryIdOf, type InventoryEvent } from '../../commands/oms/inventory.ts';
import type { OrderEvent, OrderPlaced } from '../../commands/oms/order.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { orderFulfilmentRoute } from '../../consumers/order-fulfilment-route.ts';
import { checkoutReservationRoute } from '../../consumers/checkout/checkout-reservation-route.ts';

const [tenantId, orgId, orderId, variantId, locationId] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
const inventoryId = inventoryIdOf(tenantId, orgId);

const recorded = (event: OrderEvent | InventoryEvent) =>
  ({
    ...event,
    envelope: { tenantId, orgId, aggregateId: 'a', eventId: randomUUID() },
    position: { topic: 't', partition: 0, offset: '0' },
  }) as unknown as RecordedEvent;

const routed = (event: OrderEvent | InventoryEvent) =>
  orderFulfilmentRoute.route(recorded(event)).map(({ command }) => ({ type: command.type, data: command.data }));

const line = { name: 'Cup', quantity: 2, unitPrice: '12.50', variantId, locationId, sku: null, variantLabel: null, requiresShipment: true };
const placed = (reservedAhead: boolean): OrderPlaced => ({
  type: 'OrderPlaced',
  data: {
    orderId,
    idempotencyKey: 'k',
    requestHash: 'h',
    currency: 'EUR',
    customerId: null,
    salesChannel: 'acp',
    platform: 'acp',
    paymentProvider: 'card_tokenized',
    paymentTransactionId: 'spt',
    tags: [],
    lines: [{ ...line, lineTotal: '25.00' }],
    subtotal: '25.00',
    discountTotal: '0',
    shippingTotal: '0',
    taxTotal: '0',
    total: '25.00',
    reservedAhead,
  },
});
const lines = [{ lineIndex: 0, variantId, locationId, quantity: 2 }];

describe('order fulfilment route', () => {
  it('reserves a placed order’s stock, and confirms one whose stock was reserved ahead without reserving again', () => {
    expect(routed(placed(false))).toEqual([{ type: 'ReserveStock', data: { inventoryId, orderId, lines } }]);
    expect(routed(placed(true))).toEqual([{ type: 'ConfirmOrder', data: { orderId } }]);
  });

  it('answers an order’s reservation, and leaves one made ahead of its order (no order yet, perhaps none ever) alone', () => {
    const reserved = (reservedAhead: boolean): InventoryEvent => ({
      type: 'StockReserved',
      data: { inventoryId, orderId, lines, reservedAhead },
    });
    const refused = (reservedAhead: boolean): InventoryEvent => ({
      type: 'StockReservationRefused',
      data: {
        inventoryId,
        orderId,
        lineIndex: 0,
        variantId,
        locationId,
        requested: 2,
        available: 1,
        reason: 'insufficient_stock',
        reservedAhead,
      },
    });
    expect(routed(reserved(false))).toEqual([{ type: 'ConfirmOrder', data: { orderId } }]);
    expect(routed(refused(false))).toMatchObject([{ type: 'RejectOrder', data: { orderId, reason: 'insufficient_stock' } }]);
    expect(routed(reserved(true))).toEqual([]);
    expect(routed(refused(true))).toEqual([]);
  });
});

describe('order fulfilment route: a withdrawn order id', () => {
  it('releases the stock reserved ahead for it, once (its own event), and nothing when none was held', () => {
    const withdrawn = (reservationLines: typeof lines): OrderEvent => ({
      type: 'OrderWithdrawn',
      data: { orderId, reason: 'abandoned', reservationLines },
    });
    expect(routed(withdrawn(lines))).toEqual([{ type: 'ReleaseStock', data: { inventoryId, orderId, lines } }]);
    expect(routed(withdrawn([]))).toEqual([]);
  });
});

describe('checkout reservation route', () => {
  const started = (reservation: string | null) =>
    ({
      type: 'CheckoutCompletionStarted',
      data: { sessionId: randomUUID(), orderId, attempt: 0, buyer: null, reservation },
      envelope: { tenantId, orgId, aggregateId: 'a', eventId: randomUUID() },
      position: { topic: 't', partition: 0, offset: '0' },
    }) as unknown as RecordedEvent;
  const routedFrom = (event: RecordedEvent) =>
    checkoutReservationRoute.route(event).map(({ command, aggregateId }) => ({ aggregateId, type: command.type, data: command.data }));

  it('asks the inventory, once per completion, for the stock the session recorded, ahead of the order and under its id', () => {
    expect(routedFrom(started(JSON.stringify(lines)))).toEqual([
      { aggregateId: inventoryId, type: 'ReserveStock', data: { inventoryId, orderId, lines, reservedAhead: true } },
    ]);
  });

  it('asks nothing when the session recorded none (the stock seen was short)', () => {
    expect(routedFrom(started(null))).toEqual([]);
  });
});
