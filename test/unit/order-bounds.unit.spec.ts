import { describe, expect, it } from 'vitest';
import { MAX_LINE_QUANTITY, MAX_ORDER_LINES, orderDecider, type OrderLineRequest, type PlaceOrder } from '../../commands/oms/order.ts';
import { ValidationError } from '../../ledger/errors.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';
import { placeOrderCommand } from '../support/place-order-command.ts';

const given = DeciderSpecification.for(orderDecider);

const orderId = '33333333-3333-4333-8333-333333333333';

const line: OrderLineRequest = {
  name: 'Cup',
  quantity: 1,
  unitPrice: '1.00',
  variantId: 'v1',
  locationId: 'l1',
  sku: null,
  variantLabel: null,
  requiresShipment: true,
};
const place = (
  lines: OrderLineRequest[],
  charges: Partial<Pick<PlaceOrder['data'], 'discountTotal' | 'shippingTotal' | 'taxTotal'>> = {},
) => placeOrderCommand({ orderId, lines, ...charges });
const lines = (count: number, overrides: Partial<OrderLineRequest> = {}) =>
  Array.from({ length: count }, () => ({ ...line, ...overrides }));

/** The order is refused with a ValidationError whose details name these paths. */
const expectRefused = (order: WithoutMetadata<PlaceOrder>, paths: string[], label?: string) =>
  given()
    .when(order)
    .thenThrows(ValidationError, (error) =>
      expect(
        error.details.map((d) => d.path),
        label,
      ).toEqual(paths),
    );

describe('order decider bounds', () => {
  it(`takes 1..${MAX_ORDER_LINES} lines`, () => {
    expect(
      given()
        .when(place(lines(MAX_ORDER_LINES)))
        .events(),
    ).toHaveLength(1);
    expectRefused(place([]), ['body.line_items']);
    expectRefused(place(lines(MAX_ORDER_LINES + 1)), ['body.line_items']);
  });

  it(`takes quantities of 1..${MAX_LINE_QUANTITY} whole units`, () => {
    expect(
      given()
        .when(place([{ ...line, quantity: MAX_LINE_QUANTITY }]))
        .events(),
    ).toHaveLength(1);
    for (const quantity of [0, -1, 1.5, MAX_LINE_QUANTITY + 1, 2 ** 31, Number.NaN]) {
      expectRefused(place([line, { ...line, quantity }]), ['body.line_items.1.quantity'], String(quantity));
    }
  });

  it('takes unit prices and charges of 0 ≤ amount < 10^12 with at most 6 places', () => {
    expect(
      given()
        .when(place([{ ...line, unitPrice: '999999999999.999999' }], { taxTotal: '999999999999.999999' }))
        .events(),
    ).toHaveLength(1);
    for (const unitPrice of ['1000000000000', '-1', '1.1234567', '1e3', '', 'NaN', ' 1']) {
      expectRefused(place([{ ...line, unitPrice }]), ['body.line_items.0.unit_price'], unitPrice);
    }
    expectRefused(place([line], { discountTotal: '1000000000000', shippingTotal: '-0.01', taxTotal: 'x' }), [
      'body.discount_total',
      'body.shipping_total',
      'body.tax_total',
    ]);
  });

  it('keeps every line total, the subtotal and the total below 10^15, and names what is over', () => {
    // 1 000 × (10^12 − 10^-6) is just below 10^15; one unit more is over.
    expect(
      given()
        .when(place([{ ...line, quantity: 1_000, unitPrice: '999999999999.999999' }]))
        .events(),
    ).toHaveLength(1);
    expectRefused(place([{ ...line, quantity: 1_001, unitPrice: '999999999999.99' }]), ['body.line_items.0', 'body.line_items', 'body']);
    expectRefused(place(lines(2, { quantity: 1_000, unitPrice: '600000000000' })), ['body.line_items', 'body']);
    expectRefused(place([{ ...line, quantity: 1_000, unitPrice: '999999999999.999' }], { shippingTotal: '1' }), ['body']);
  });

  it('computes the largest order exactly (decimal.js rounds to 20 digits unless told otherwise)', () => {
    const [placed] = given()
      .when(place([{ ...line, quantity: 999, unitPrice: '999999999999.999999' }]))
      .events();
    expect(placed?.data).toMatchObject({ subtotal: '998999999999999.999001', total: '998999999999999.999001' });

    // 250 lines of 999 999 × 3 999 999.999999: 21 significant digits, which the default precision rounds to …750.00003.
    const largest = given()
      .when(place(lines(MAX_ORDER_LINES, { quantity: MAX_LINE_QUANTITY - 1, unitPrice: '3999999.999999' }), { taxTotal: '0.000001' }))
      .events();
    expect(largest[0]?.data).toMatchObject({ subtotal: '999998999999750.00025', total: '999998999999750.000251' });
  });
});
