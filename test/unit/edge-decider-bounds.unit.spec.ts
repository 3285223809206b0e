import { describe, expect, it } from 'vitest';
import { MAX_SORT_ORDER, productDecider, type ProductCommand, type ProductEvent } from '../../commands/catalog/product.ts';
import { MAX_LINE_QUANTITY, orderDecider, type OrderLineRequest } from '../../commands/oms/order.ts';
import { exactAmount } from '../../commands/oms/order-mapping.ts';
import { sortOrder } from '../../http/catalog-schemas.ts';
import { createOrderBody } from '../../http/order-schemas.ts';
import { decimalAmount } from '../../http/schemas.ts';
import { ValidationError } from '../../ledger/errors.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';
import { placeOrderCommand } from '../support/place-order-command.ts';

/** The edge's schemas and the deciders draw each bound from commands/: what one takes at the edge of a bound, the other takes. */
const products = DeciderSpecification.for(productDecider);
const orders = DeciderSpecification.for(orderDecider);

const productId = '44444444-4444-4444-8444-444444444444';
const created: ProductEvent = {
  type: 'ProductCreated',
  data: { productId, title: 'Mug', description: null, category: null, status: 'ACTIVE' },
};
const variant = (price: string): WithoutMetadata<ProductCommand> => ({
  type: 'AddVariant',
  data: { productId, variantId: 'v1', sku: null, barcode: null, price, currency: 'USD' },
});
const media = (order: number): WithoutMetadata<ProductCommand> => ({
  type: 'AddMedia',
  data: { productId, mediaId: 'm1', variantId: null, url: 'https://cdn.example.com/m.png', altText: null, sortOrder: order },
});
const line: OrderLineRequest = {
  name: 'Cup',
  quantity: 1,
  unitPrice: '1.00',
  variantId: null,
  locationId: null,
  sku: null,
  variantLabel: null,
  requiresShipment: true,
};
const orderWith = (overrides: Partial<OrderLineRequest>) =>
  placeOrderCommand({ orderId: '33333333-3333-4333-8333-333333333333', lines: [{ ...line, ...overrides }] });
const orderBody = (quantity: number) => ({
  idempotency_key: 'k1',
  payment_provider: 'manual',
  payment_transaction_id: 'tx-1',
  line_items: [{ name: 'Cup', quantity, unit_price: '1.00' }],
});

const accepts = (decide: () => unknown): boolean => {
  try {
    decide();
    return true;
  } catch (error) {
    if (error instanceof ValidationError) return false;
    throw error;
  }
};
const productTakes = (command: WithoutMetadata<ProductCommand>) => accepts(() => products([created]).when(command).events());
const orderTakes = (overrides: Partial<OrderLineRequest>) => accepts(() => orders().when(orderWith(overrides)).events());

describe('the edge and the deciders hold one bound', () => {
  const amounts = ['0', '0.000001', '19.99', '999999999999.999999', '1000000000000', '1000000000000.00', '1.1234567', '-0.01', '1e3'];

  it.each(amounts)('amount %s: the edge, the product and order deciders and the order mapping agree', (value) => {
    const edge = decimalAmount.safeParse(value);
    const mapped = accepts(() => {
      try {
        return exactAmount(value, 'p');
      } catch (error) {
        throw new ValidationError(String(error), []);
      }
    });
    expect(mapped, 'order mapping').toBe(edge.success);
    // A decider receives what the edge made of the value, or the raw text when the edge refused it.
    const sent = edge.success ? edge.data : value;
    expect(productTakes(variant(sent)), 'product decider').toBe(edge.success);
    expect(orderTakes({ unitPrice: sent }), 'order decider').toBe(edge.success);
  });

  it.each([-MAX_SORT_ORDER - 1, -MAX_SORT_ORDER, 0, MAX_SORT_ORDER, MAX_SORT_ORDER + 1])(
    'sort order %d: the edge and the product decider agree',
    (value) => {
      expect(productTakes(media(value))).toBe(sortOrder.safeParse(value).success);
    },
  );

  it.each([0, 1, MAX_LINE_QUANTITY, MAX_LINE_QUANTITY + 1])('line quantity %d: the edge and the order decider agree', (quantity) => {
    expect(orderTakes({ quantity })).toBe(createOrderBody.safeParse(orderBody(quantity)).success);
  });

  it('refuses what lies beyond each bound (so that the agreement above is not vacuous)', () => {
    expect(decimalAmount.safeParse('999999999999.999999').success).toBe(true);
    expect(decimalAmount.safeParse('1000000000000').success).toBe(false);
    expect(sortOrder.safeParse(MAX_SORT_ORDER + 1).success).toBe(false);
    expect(createOrderBody.safeParse(orderBody(MAX_LINE_QUANTITY + 1)).success).toBe(false);
    expect(createOrderBody.safeParse(orderBody(MAX_LINE_QUANTITY)).success).toBe(true);
  });
});
