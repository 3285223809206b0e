import { describe, expect, it } from 'vitest';
import { orderIdOf } from '../../commands/oms/order.ts';
import {
  exactAmount,
  mappedIdempotencyKey,
  mappingKindOf,
  NO_LOCATION_TAG,
  parsePlatformOrder,
  placeOrderFrom,
  requestedStatusOf,
  UNMATCHED_TAG,
  type MappingContext,
  type PlatformOrder,
} from '../../commands/oms/order-mapping.ts';

const order = (data: Record<string, unknown>, externalId: string | null = 'ord-1') => parsePlatformOrder(JSON.stringify(data), externalId);
const parsed = (data: Record<string, unknown>, externalId: string | null = 'ord-1'): PlatformOrder => {
  const result = order(data, externalId);
  if (!result.ok) throw new Error(result.reason);
  return result.order;
};
const reason = (data: unknown, externalId: string | null = 'ord-1') => {
  const result = parsePlatformOrder(JSON.stringify(data), externalId);
  return result.ok ? undefined : result.reason;
};
const line = { item_id: 'i-1', sku: 'SKU-1', name: 'Mug', quantity: 3, unit_amount: 19.99 };

const context: MappingContext = {
  tenantId: '00000000-0000-4000-8000-000000000001',
  orgId: '00000000-0000-4000-8000-000000000002',
  unifiedConnectionId: 'conn-1',
  provider: 'shopify',
  defaultLocationId: null,
  matches: [],
};
const variantA = '10000000-0000-4000-8000-00000000000a';
const location = '20000000-0000-4000-8000-00000000000b';

describe('mappingKindOf', () => {
  it('maps the spec kinds and the short spellings; every other kind is stored only', () => {
    expect(mappingKindOf('accounting.order.created')).toBe('created');
    expect(mappingKindOf('order.created')).toBe('created');
    expect(mappingKindOf('accounting.order.updated')).toBe('updated');
    expect(mappingKindOf('order.updated')).toBe('updated');
    expect(mappingKindOf('product.updated')).toBeNull();
    expect(mappingKindOf('accounting.order.deleted')).toBeNull();
  });
});

describe('exactAmount', () => {
  it('reads a JSON number back as the decimal the platform wrote, never through float sums', () => {
    expect(exactAmount(19.99, 'x')).toBe('19.99');
    expect(exactAmount(5.1, 'x')).toBe('5.10');
    expect(exactAmount(0.1, 'x')).toBe('0.10');
    expect(exactAmount(7, 'x')).toBe('7.00');
    expect(exactAmount(1.234567, 'x')).toBe('1.234567');
    expect(exactAmount('12.5', 'x')).toBe('12.50');
    expect(exactAmount(999999999999.99, 'x')).toBe('999999999999.99');
  });

  it('refuses negative, too precise, too large and non-numeric amounts', () => {
    expect(() => exactAmount(-1, 'p')).toThrow(/p must be between/);
    expect(() => exactAmount(1.0000001, 'p')).toThrow(/at most 6 decimal places/);
    expect(() => exactAmount(1e12, 'p')).toThrow(/between 0 and 10\^12/);
    expect(() => exactAmount('abc', 'p')).toThrow(/p must be a number/);
    expect(() => exactAmount(true, 'p')).toThrow(/must be a number/);
  });
});

describe('parsePlatformOrder', () => {
  it('reads the order: currency (default USD), lines with exact unit prices, charges, status, customer and payment', () => {
    expect(parsed({ id: 'ord-1', line_items: [line] })).toEqual({
      externalId: 'ord-1',
      currency: 'USD',
      lines: [{ itemId: 'i-1', variantId: null, sku: 'SKU-1', name: 'Mug', quantity: 3, unitPrice: '19.99' }],
      status: null,
      customerId: null,
      paymentTransactionId: null,
      discountTotal: '0.00',
      shippingTotal: '0.00',
      taxTotal: '0.00',
    });
    const full = parsed({
      currency: 'eur',
      line_items: [{ ...line, item_id: 42 }],
      status: 'processing',
      customer_id: 'cus_1',
      payment: { transaction_id: 'tx-9' },
      discount_amount: 1,
      shipping_amount: 4.9,
      tax_amount: '2.25',
    });
    expect(full).toMatchObject({ currency: 'EUR', status: 'processing', customerId: 'cus_1', paymentTransactionId: 'tx-9' });
    expect(full).toMatchObject({ discountTotal: '1.00', shippingTotal: '4.90', taxTotal: '2.25' });
    expect(full.lines[0]?.itemId).toBe('42');
    expect(parsed({ line_items: [line], payment_transaction_id: 'pt-1', payment: { transaction_id: 'tx-9' } }).paymentTransactionId).toBe(
      'pt-1',
    );
  });

  it('takes data.id when the inbox gave no external id, and names a line by its sku or item id without a name', () => {
    expect(parsed({ id: 77, line_items: [line] }, null).externalId).toBe('77');
    expect(parsed({ line_items: [{ sku: 'S', quantity: 1, unit_amount: 1 }] }).lines[0]?.name).toBe('S');
    expect(parsed({ line_items: [{ item_id: 'I', quantity: 1, unit_amount: 1 }] }).lines[0]?.name).toBe('I');
    expect(parsed({ line_items: [{ quantity: 1, unit_amount: 1 }] }).lines[0]?.name).toBe('line 1');
  });

  it('says why an order can never be mapped', () => {
    expect(parsePlatformOrder('{not json', 'x')).toEqual({ ok: false, reason: 'data is not JSON' });
    expect(reason([1, 2])).toBe('data must be an object');
    expect(reason({ line_items: [line] }, null)).toMatch(/data.id is missing/);
    expect(reason({ line_items: [] })).toMatch(/non-empty array/);
    expect(reason({})).toMatch(/non-empty array/);
    expect(reason({ line_items: [line], currency: 'ABC' })).toMatch(/"ABC" is not an ISO 4217/);
    expect(reason({ line_items: [line], currency: 'EURO' })).toMatch(/not an ISO 4217/);
    expect(reason({ line_items: [line], currency: 12 })).toMatch(/not an ISO 4217/);
    expect(reason({ line_items: [{ ...line, quantity: 0 }] })).toMatch(/line_items.0.quantity must be an integer/);
    expect(reason({ line_items: [{ ...line, quantity: 1.5 }] })).toMatch(/quantity must be an integer/);
    expect(reason({ line_items: [line, { ...line, unit_amount: undefined }] })).toMatch(/line_items.1.unit_amount is missing/);
    expect(reason({ line_items: [{ ...line, unit_amount: -2 }] })).toMatch(/unit_amount must be between/);
    expect(reason({ line_items: [line], shipping_amount: 'free' })).toMatch(/data.shipping_amount must be a number/);
    expect(reason({ line_items: Array.from({ length: 251 }, () => line) })).toMatch(/at most 250/);
    expect(reason({ line_items: ['x'] })).toMatch(/line_items.0 must be an object/);
  });
});

describe("parsePlatformOrder of Unified's AccountingOrder", () => {
  const unifiedLine = {
    id: 'li-1',
    item_id: 'item_7',
    item_sku: 'SKU-7',
    item_name: 'Teapot',
    unit_quantity: 2,
    unit_amount: 12.5,
    tax_amount: 1.25,
    discount_amount: 0.5,
    item_variants: [{ id: 'variant_9' }],
  };

  it('reads lineitems (item, variant, SKU, name, quantity, price), their tax and discount summed, the contact as customer', () => {
    const order = parsed({
      id: 'ord-7',
      currency: 'CAD',
      status: 'CANCELED',
      contact_id: 'contact-3',
      lineitems: [unifiedLine, { ...unifiedLine, id: 'li-2', item_variants: undefined, tax_amount: 0.75, discount_amount: undefined }],
    });
    expect(order.lines).toEqual([
      { itemId: 'item_7', variantId: 'variant_9', sku: 'SKU-7', name: 'Teapot', quantity: 2, unitPrice: '12.50' },
      { itemId: 'item_7', variantId: null, sku: 'SKU-7', name: 'Teapot', quantity: 2, unitPrice: '12.50' },
    ]);
    expect(order).toMatchObject({
      currency: 'CAD',
      customerId: 'contact-3',
      taxTotal: '2.00',
      discountTotal: '0.50',
      shippingTotal: '0.00',
    });
    expect(requestedStatusOf(order.status)).toBe('cancelled');
  });

  it('says why a Unified order can never be mapped, naming its own fields', () => {
    expect(reason({ lineitems: [] })).toBe('data.lineitems must be a non-empty array');
    expect(reason({ lineitems: [{ ...unifiedLine, unit_quantity: 0 }] })).toContain('data.lineitems.0.unit_quantity must be an integer');
  });
});

describe('placeOrderFrom', () => {
  const platform = parsed({
    line_items: [
      line,
      { item_id: 'i-2', sku: 'SKU-2', name: 'Plate', quantity: 1, unit_amount: 5.1 },
      { name: 'Gift wrap', quantity: 1, unit_amount: 0 },
    ],
    customer_id: 'cus_1',
  });

  it('lands on the order of the connection and external id, with the provider as channel, platform and payment provider', () => {
    const placed = placeOrderFrom(platform, { ...context, matches: [null, null, null] });
    expect(placed.idempotencyKey).toBe('unified:conn-1:ord-1');
    expect(placed.idempotencyKey).toBe(mappedIdempotencyKey('conn-1', 'ord-1'));
    expect(placed.orderId).toBe(orderIdOf(context.tenantId, context.orgId, 'unified:conn-1:ord-1'));
    expect(placed).toMatchObject({ salesChannel: 'shopify', platform: 'shopify', paymentProvider: 'shopify', currency: 'USD' });
    expect(placed.paymentTransactionId).toBe('conn-1:ord-1');
    expect(placed.customerId).toBeNull();
    expect(placed.tags).toContain('customer:cus_1');
    expect(placed.lines.map((l) => l.unitPrice)).toEqual(['19.99', '5.10', '0.00']);
  });

  it('backs a matched line with the variant and the default location, and flags the unmatched ones', () => {
    const placed = placeOrderFrom(platform, {
      ...context,
      defaultLocationId: location,
      matches: [{ variantId: variantA, sku: 'OURS' }, null, null],
    });
    expect(placed.lines[0]).toMatchObject({ variantId: variantA, locationId: location, sku: 'SKU-1', name: 'Mug' });
    expect(placed.lines[1]).toMatchObject({ variantId: null, locationId: null, sku: 'SKU-2' });
    expect(placed.tags).toEqual([UNMATCHED_TAG, 'unmatched-line:1', 'unmatched-line:2', 'customer:cus_1']);
  });

  it('keeps a matched line without a variant when the connection has no location (a variant needs one)', () => {
    const placed = placeOrderFrom(platform, {
      ...context,
      matches: [{ variantId: variantA, sku: 'OURS' }, { variantId: variantA, sku: null }, null],
    });
    expect(placed.lines.every((l) => l.variantId === null && l.locationId === null)).toBe(true);
    expect(placed.tags).toContain(NO_LOCATION_TAG);
    expect(placed.tags).toContain('unmatched-line:2');
    expect(placed.tags).not.toContain('unmatched-line:0');
  });

  it('takes a uuid customer id as the customer', () => {
    const customer = 'AAAAAAAA-0000-4000-8000-000000000001';
    const placed = placeOrderFrom(parsed({ line_items: [line], customer_id: customer }), { ...context, matches: [null] });
    expect(placed.customerId).toBe(customer.toLowerCase());
  });

  it('hashes the mapped request: the same platform order gives the same hash, another order another', () => {
    const a = placeOrderFrom(platform, { ...context, matches: [null, null, null] });
    const again = placeOrderFrom(
      parsed({
        ...JSON.parse(
          JSON.stringify({
            line_items: [
              line,
              { item_id: 'i-2', sku: 'SKU-2', name: 'Plate', quantity: 1, unit_amount: 5.1 },
              { name: 'Gift wrap', quantity: 1, unit_amount: 0 },
            ],
          }),
        ),
        customer_id: 'cus_1',
        status: 'paid',
      }),
      { ...context, matches: [null, null, null] },
    );
    expect(again.requestHash).toBe(a.requestHash);
    expect(a.requestHash).toMatch(/^[0-9a-f]{64}$/);
    const other = placeOrderFrom(parsed({ line_items: [{ ...line, quantity: 4 }] }), { ...context, matches: [null] });
    expect(other.requestHash).not.toBe(a.requestHash);
  });
});

describe('requestedStatusOf', () => {
  it('maps the platform statuses onto the order state machine; any other is no move', () => {
    for (const s of ['cancelled', 'canceled', 'voided', 'CANCELLED']) expect(requestedStatusOf(s)).toBe('cancelled');
    for (const s of ['processing', 'in_progress', 'In Progress']) expect(requestedStatusOf(s)).toBe('processing');
    for (const s of ['fulfilled', 'shipped']) expect(requestedStatusOf(s)).toBe('shipped');
    for (const s of ['completed', 'delivered']) expect(requestedStatusOf(s)).toBe('delivered');
    for (const s of ['paid', 'open', 'draft', '']) expect(requestedStatusOf(s)).toBeNull();
    expect(requestedStatusOf(null)).toBeNull();
  });
});
