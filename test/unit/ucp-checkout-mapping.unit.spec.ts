import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cartProblems, cartTotals, type Cart } from '../../commands/acp/checkout-cart.ts';
import type { CheckoutStatus } from '../../commands/acp/checkout-session.ts';
import { ConflictError, NotFoundError } from '../../ledger/errors.ts';
import type { CheckoutSessionRow } from '../../projections/checkout/checkout-queries.ts';
import { CheckoutRefused } from '../../http/checkout-refused.ts';
import { ucpFulfillmentOf, ucpItemsOf, ucpPaymentOf } from '../../http/ucp-checkout-request.ts';
import { platformProfileOf, ucpErrorOf } from '../../http/ucp-edge.ts';
import { ucpSessionBody } from '../../http/ucp-session-body.ts';
import { ucpDestination } from '../support/ucp-buyer.ts';
import { ucpResponseProblems } from '../support/ucp-checkout-schema.ts';

const [variantA, variantB, productId] = [randomUUID(), randomUUID(), randomUUID()];
const destination = { id: 'home', ...ucpDestination, extended_address: 'Bâtiment B' };

const cartOf = (overrides: Partial<Cart> = {}): Cart => ({
  currency: 'EUR',
  lines: [
    { itemId: variantA, productId, name: 'Espresso cup', sku: 'CUP', quantity: 2, unitPrice: '12.50', available: 10 },
    { itemId: variantB, productId, name: 'Moka pot', sku: null, quantity: 1, unitPrice: '30.00', available: 3 },
  ],
  shippingOptions: [{ id: 'standard', title: 'Standard shipping', price: '4.90' }],
  selectedOptionId: null,
  fulfillmentDetails: null,
  buyer: null,
  ...overrides,
});

const rowOf = (cart: Cart, status?: CheckoutStatus, orderId: string | null = null): CheckoutSessionRow => {
  const { subtotal, shippingTotal, total } = cartTotals(cart);
  return {
    id: randomUUID(),
    tenant_id: randomUUID(),
    org_id: randomUUID(),
    status: status ?? (cartProblems(cart).length === 0 ? 'ready_for_payment' : 'not_ready_for_payment'),
    currency: cart.currency,
    cart,
    subtotal,
    shipping_total: shippingTotal,
    total,
    order_id: orderId,
    attempt: 0,
    last_failure: null,
    created_at: new Date(),
    updated_at: new Date(),
  };
};

const orderUrl = (id: string) => `https://ledger.example.com/api/v1/oms/orders/${id}`;

describe('a UCP checkout request as the session holds it', () => {
  it('sums the units of an item named on two lines, in the order items first appear', () => {
    expect(
      ucpItemsOf([
        { item: { id: variantA }, quantity: 2 },
        { item: { id: variantB }, quantity: 1 },
        { id: 'li_x', item: { id: variantA }, quantity: 3 },
      ]),
    ).toEqual([
      { id: variantA, quantity: 5 },
      { id: variantB, quantity: 1 },
    ]);
  });

  it('takes the one shipping destination as the fulfillment address, and the option the first group selects', () => {
    const { fulfillmentDetails, selectedOptionId } = ucpFulfillmentOf(
      { methods: [{ type: 'shipping', destinations: [destination], groups: [{ id: 'package', selected_option_id: 'standard' }] }] },
      undefined,
    );
    expect(selectedOptionId).toBe('standard');
    expect(JSON.parse(fulfillmentDetails ?? 'null')).toEqual({
      name: 'Ada Lovelace',
      address: {
        name: 'Ada Lovelace',
        line_one: '1 Rue de la Paix',
        line_two: 'Bâtiment B',
        city: 'Paris',
        state: 'IDF',
        country: 'FR',
        postal_code: '75002',
      },
    });
  });

  it('picks the selected destination among several, names it by the buyer when the address has no name, and leaves an incomplete one out', () => {
    const other = { ...destination, id: 'work', street_address: '2 Avenue', first_name: undefined, last_name: undefined };
    const chosen = ucpFulfillmentOf(
      { methods: [{ destinations: [destination, other], selected_destination_id: 'work' }] },
      { first_name: 'Grace', last_name: 'Hopper' },
    );
    expect(JSON.parse(chosen.fulfillmentDetails ?? 'null')).toMatchObject({ name: 'Grace Hopper', address: { line_one: '2 Avenue' } });
    expect(ucpFulfillmentOf({ methods: [{ destinations: [destination, other] }] }, undefined).fulfillmentDetails).toBeNull();
    expect(ucpFulfillmentOf({ methods: [{ destinations: [{ address_country: 'FR' }] }] }, undefined).fulfillmentDetails).toBeNull();
    expect(ucpFulfillmentOf(undefined, undefined)).toEqual({ fulfillmentDetails: null, selectedOptionId: null });
  });

  it('refuses pickup, a second method and a selected destination that is not listed, naming where', () => {
    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return error instanceof CheckoutRefused ? error.param : error;
      }
      return undefined;
    };
    expect(refusal(() => ucpFulfillmentOf({ methods: [{ type: 'pickup' }] }, undefined))).toBe('$.fulfillment.methods[0].type');
    expect(refusal(() => ucpFulfillmentOf({ methods: [{ type: 'shipping' }, { type: 'shipping' }] }, undefined))).toBe(
      '$.fulfillment.methods',
    );
    expect(
      refusal(() => ucpFulfillmentOf({ methods: [{ destinations: [destination], selected_destination_id: 'nope' }] }, undefined)),
    ).toBe('$.fulfillment.methods[0].destinations');
  });

  it("records the selected instrument's token under our handler, and refuses another handler or no token", () => {
    const card = { id: 'i1', handler_id: 'card_tokenized', type: 'card', credential: { type: 'token', token: 'tok_1' } };
    expect(ucpPaymentOf([card])).toEqual({ provider: 'card_tokenized', transactionId: 'tok_1' });
    expect(
      ucpPaymentOf([
        { ...card, id: 'i0', selected: false },
        { ...card, selected: true, credential: { type: 'token', token: 'tok_2' } },
      ]),
    ).toEqual({
      provider: 'card_tokenized',
      transactionId: 'tok_2',
    });
    expect(() => ucpPaymentOf([{ ...card, handler_id: 'gpay' }])).toThrow(/not offered/);
    expect(() => ucpPaymentOf([{ ...card, credential: { type: 'token' } }])).toThrow(/no token/);
    expect(() => ucpPaymentOf([card, card])).toThrow(/exactly one/);
  });
});

describe('a session as UCP checkout', () => {
  it("is incomplete while the address and the option are missing, saying where in UCP's checkout", () => {
    const body = ucpSessionBody(rowOf(cartOf()), null, orderUrl);
    expect(ucpResponseProblems(body)).toEqual([]);
    expect(body.status).toBe('incomplete');
    expect(body.messages.map((message) => [message.code, message.path, message.severity])).toEqual([
      ['missing', '$.fulfillment.methods[0].destinations', 'recoverable'],
      ['missing', '$.fulfillment.methods[0].groups[0].selected_option_id', 'recoverable'],
    ]);
    expect(body.totals).toEqual([
      { type: 'subtotal', amount: 5500 },
      { type: 'total', amount: 5500 },
    ]);
  });

  it('is ready_for_complete with the address and the option, shipping in the totals, the destination round-tripped', () => {
    const { fulfillmentDetails } = ucpFulfillmentOf({ methods: [{ destinations: [destination] }] }, undefined);
    const settings = { termsOfServiceUrl: 'https://shop.example.com/terms', returnPolicyUrl: 'https://shop.example.com/returns' };
    const body = ucpSessionBody(rowOf(cartOf({ fulfillmentDetails, selectedOptionId: 'standard' })), settings as never, orderUrl);
    expect(ucpResponseProblems(body)).toEqual([]);
    expect(body).toMatchObject({
      status: 'ready_for_complete',
      currency: 'EUR',
      messages: [],
      totals: [
        { type: 'subtotal', amount: 5500 },
        { type: 'fulfillment', amount: 490 },
        { type: 'total', amount: 5990 },
      ],
      links: [
        { type: 'terms_of_service', url: 'https://shop.example.com/terms' },
        { type: 'refund_policy', url: 'https://shop.example.com/returns' },
      ],
    });
    const [method] = body.fulfillment.methods;
    expect(method?.destinations).toEqual([{ ...destination, id: 'destination' }]);
    expect(method?.groups[0]).toMatchObject({
      selected_option_id: 'standard',
      options: [{ id: 'standard', totals: [{ type: 'total', amount: 490 }] }],
    });
  });

  it('names the order once completed, and no longer says what is missing', () => {
    const orderId = randomUUID();
    const body = ucpSessionBody(rowOf(cartOf(), 'completed', orderId), null, orderUrl);
    expect(ucpResponseProblems(body)).toEqual([]);
    expect(body).toMatchObject({ status: 'completed', messages: [], order: { id: orderId, permalink_url: orderUrl(orderId) } });
  });

  it.each([
    ['not_ready_for_payment', 'incomplete'],
    ['ready_for_payment', 'ready_for_complete'],
    ['complete_in_progress', 'complete_in_progress'],
    ['canceled', 'canceled'],
  ] as const)('says %s as %s', (status, ucp) => {
    const body = ucpSessionBody(rowOf(cartOf(), status), null, orderUrl);
    expect(body.status).toBe(ucp);
    expect(ucpResponseProblems(body)).toEqual([]);
  });
});

describe("UCP's errors", () => {
  it('answers refusals and an unknown session as business outcomes (200, error_response), the rest as protocol errors', () => {
    const refused = ucpErrorOf(new CheckoutRefused(400, 'invalid', 'item x does not exist', '$.line_items[0].item.id'));
    expect(refused).toMatchObject({
      statusCode: 200,
      body: {
        ucp: { status: 'error' },
        messages: [{ code: 'item_unavailable', severity: 'recoverable', path: '$.line_items[0].item.id' }],
      },
    });
    expect(ucpResponseProblems(refused.body)).toEqual([]);
    const unknown = ucpErrorOf(new NotFoundError('checkout session x not found'));
    expect(unknown).toMatchObject({ statusCode: 200, body: { messages: [{ code: 'not_found', severity: 'unrecoverable' }] } });
    expect(ucpResponseProblems(unknown.body)).toEqual([]);
    const reused = ucpErrorOf(new ConflictError('used', [{ path: 'headers.idempotency-key', message: 'used' }]));
    expect(reused).toEqual({ statusCode: 409, body: { code: 'idempotency_conflict', content: 'used' } });
  });

  it("reads the platform's profile from UCP-Agent (an RFC 8941 dictionary), https only", () => {
    expect(platformProfileOf('profile="https://platform.example/.well-known/ucp"')).toBe('https://platform.example/.well-known/ucp');
    expect(platformProfileOf('version="2026-04-08", profile="https://p.example/ucp";v=1')).toBe('https://p.example/ucp');
    expect(platformProfileOf('profile="http://p.example/ucp"')).toBeUndefined();
    expect(platformProfileOf('https://p.example/ucp')).toBeUndefined();
    expect(platformProfileOf(undefined)).toBeUndefined();
  });
});
