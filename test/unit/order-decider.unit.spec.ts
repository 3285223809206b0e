import { describe, expect, it } from 'vitest';
import { evolve, initialState, orderDecider, type OrderCommand, type OrderEvent, type OrderStatus } from '../../commands/oms/order.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';
import { placeOrderCommand } from '../support/place-order-command.ts';

const given = DeciderSpecification.for(orderDecider);

const orderId = '22222222-2222-4222-8222-222222222222';

const line = {
  name: 'Cup',
  quantity: 3,
  unitPrice: '19.99',
  variantId: 'v1',
  locationId: 'l1',
  sku: null,
  variantLabel: null,
  requiresShipment: true,
};
const place = placeOrderCommand({
  orderId,
  lines: [line, { ...line, name: 'A', quantity: 1, unitPrice: '0.10' }, { ...line, name: 'B', quantity: 1, unitPrice: '0.20' }],
});
const placed = given().when(place).events()[0] as OrderEvent;
const confirmed: OrderEvent = { type: 'OrderConfirmed', data: { orderId, paymentStatus: 'authorized' } };
/** A move to cancelled or shipped ends the reservation: the event names its lines (the first line is inventory-backed). */
const reservation = [
  { lineIndex: 0, variantId: 'v1', locationId: 'l1', quantity: 3 },
  { lineIndex: 1, variantId: 'v1', locationId: 'l1', quantity: 1 },
  { lineIndex: 2, variantId: 'v1', locationId: 'l1', quantity: 1 },
];
const changed = (from: OrderStatus, to: OrderStatus): OrderEvent => ({
  type: 'OrderStatusChanged',
  data: { orderId, from, to, ...(to === 'cancelled' || to === 'shipped' ? { reservationLines: reservation } : {}) },
});
const request = (status: 'processing' | 'shipped' | 'delivered' | 'cancelled'): WithoutMetadata<OrderCommand> => ({
  type: 'RequestOrderStatus',
  data: { orderId, status },
});

/** The events that bring an order into each status. */
const history: Record<OrderStatus, OrderEvent[]> = {
  pending: [placed],
  confirmed: [placed, confirmed],
  rejected: [placed, { type: 'OrderRejected', data: { orderId, reason: 'insufficient_stock', message: 'no', lineIndex: 0 } }],
  processing: [placed, confirmed, changed('confirmed', 'processing')],
  shipped: [placed, confirmed, changed('confirmed', 'processing'), changed('processing', 'shipped')],
  delivered: [placed, confirmed, changed('confirmed', 'processing'), changed('processing', 'shipped'), changed('shipped', 'delivered')],
  cancelled: [placed, confirmed, changed('confirmed', 'cancelled')],
};
const allowed: [OrderStatus, OrderStatus][] = [
  ['confirmed', 'processing'],
  ['confirmed', 'cancelled'],
  ['processing', 'shipped'],
  ['processing', 'cancelled'],
  ['shipped', 'delivered'],
];
const requestable = ['processing', 'shipped', 'delivered', 'cancelled'] as const;

describe('order decider', () => {
  it('places an order with exact decimal totals', () => {
    expect(placed).toMatchObject({
      type: 'OrderPlaced',
      data: { orderId, subtotal: '60.27', discountTotal: '0.00', total: '60.27' },
    });
    expect((placed.data as { lines: { lineTotal: string }[] }).lines.map((l) => l.lineTotal)).toEqual(['59.97', '0.10', '0.20']);
    const charged = given()
      .when({ ...place, data: { ...place.data, discountTotal: '10.005', shippingTotal: '4.9', taxTotal: '1.1' } })
      .events();
    expect(charged[0]?.data).toMatchObject({
      subtotal: '60.27',
      discountTotal: '10.005',
      shippingTotal: '4.90',
      taxTotal: '1.10',
      total: '56.265',
    });
  });

  it('refuses a discount that makes the total negative', () => {
    given()
      .when({ ...place, data: { ...place.data, discountTotal: '100' } })
      .thenThrows(ValidationError);
  });

  it('returns nothing new for the same idempotency key with the same request, and refuses another request', () => {
    for (const events of Object.values(history)) {
      given(events).when(place).thenNothingHappened();
      given(events)
        .when({ ...place, data: { ...place.data, requestHash: 'h2' } })
        .thenThrows(ConflictError);
    }
  });

  it('confirms or rejects a pending order once', () => {
    given([placed]).when({ type: 'ConfirmOrder', data: { orderId } }).then([confirmed]);
    const rejection = { orderId, reason: 'insufficient_stock', message: 'line 0', lineIndex: 0 };
    given([placed])
      .when({ type: 'RejectOrder', data: rejection })
      .then([{ type: 'OrderRejected', data: rejection }]);
    for (const status of ['confirmed', 'rejected', 'processing', 'cancelled'] as const) {
      given(history[status]).when({ type: 'ConfirmOrder', data: { orderId } }).thenNothingHappened();
      given(history[status]).when({ type: 'RejectOrder', data: rejection }).thenNothingHappened();
    }
  });

  it('withdraws an id never placed once, releasing what was held ahead; refuses to withdraw a placed order, and to place a withdrawn one', () => {
    const withdrawal = { orderId, reason: 'abandoned', reservationLines: reservation };
    const withdrawn: OrderEvent = { type: 'OrderWithdrawn', data: withdrawal };
    given().when({ type: 'WithdrawOrder', data: withdrawal }).then([withdrawn]);
    given([withdrawn]).when({ type: 'WithdrawOrder', data: withdrawal }).thenNothingHappened();
    given([withdrawn]).when(place).thenThrows(ConflictError);
    given([withdrawn]).when({ type: 'ConfirmOrder', data: { orderId } }).thenThrows(NotFoundError);
    for (const events of Object.values(history)) given(events).when({ type: 'WithdrawOrder', data: withdrawal }).thenThrows(ConflictError);
    expect(evolve(evolve(initialState(), placed), withdrawn)).toMatchObject({ status: 'Placed' });
  });

  it('knows no order that was never placed', () => {
    for (const command of [{ type: 'ConfirmOrder', data: { orderId } }, request('processing')] as const)
      given().when(command).thenThrows(NotFoundError);
  });

  for (const from of Object.keys(history) as OrderStatus[]) {
    for (const to of requestable) {
      const isAllowed = allowed.some(([a, b]) => a === from && b === to);
      const verdict = isAllowed ? 'applies' : from === to ? 'ignores (no change)' : 'records a refusal of';
      it(`${verdict} ${from} → ${to}`, () => {
        const decision = given(history[from]).when(request(to));
        if (isAllowed) decision.then([changed(from, to)]);
        else if (from === to) decision.thenNothingHappened();
        else {
          const refused: OrderEvent = {
            type: 'OrderStatusChangeRejected',
            data: { orderId, current: from, requested: to, reason: `cannot move from ${from} to ${to}` },
          };
          decision.then([refused]);
          expect([...history[from], refused].reduce(evolve, initialState())).toEqual(history[from].reduce(evolve, initialState()));
        }
      });
    }
  }
});
