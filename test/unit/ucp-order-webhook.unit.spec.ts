import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Cart } from '../../commands/acp/checkout-cart.ts';
import { signRequest } from '../../commands/acp/ucp-message-signature.ts';
import { ucpOrderOf, type OrderMove } from '../../commands/acp/ucp-order.ts';
import { ucpSigningKeyOf } from '../../commands/acp/ucp-signing-key.ts';
import { ucpOrderProblems } from '../support/ucp-checkout-schema.ts';
import { ucpRequestSignatureProblems } from '../support/ucp-signatures.ts';
import { ucpDestination } from '../support/ucp-buyer.ts';

const [variantA, variantB, productId, sessionId, orderId] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
const address = { name: 'Ada Lovelace', line_one: '1 Rue de la Paix', city: 'Paris', state: 'IDF', country: 'FR', postal_code: '75002' };

const cart = (overrides: Partial<Cart> = {}): Cart => ({
  currency: 'EUR',
  lines: [
    { itemId: variantA, productId, name: 'Espresso cup', sku: 'CUP', quantity: 2, unitPrice: '12.50', available: 10 },
    { itemId: variantB, productId, name: 'Moka pot', sku: null, quantity: 1, unitPrice: '30.00', available: 3 },
  ],
  shippingOptions: [{ id: 'standard', title: 'Standard shipping', price: '4.90' }],
  selectedOptionId: 'standard',
  fulfillmentDetails: JSON.stringify({ name: 'Ada Lovelace', address }),
  buyer: null,
  ...overrides,
});

const at = (minute: number) => new Date(Date.UTC(2026, 10, 26, 12, minute));
const orderAfter = (moves: OrderMove[], overrides: Partial<Cart> = {}) =>
  ucpOrderOf({ publicBaseUrl: 'https://ledger.example.com', sessionId, orderId, cart: cart(overrides), moves });

describe("UCP's order (2026-04-08) of a completed session", () => {
  it('created: every unit processing, the shipping expectation, no events, the checkout’s totals; valid against UCP’s order.json', () => {
    const order = orderAfter([]);
    expect(ucpOrderProblems(order)).toEqual([]);
    expect(order).toMatchObject({
      ucp: { version: '2026-04-08', capabilities: { 'dev.ucp.shopping.order': [{ version: '2026-04-08' }] } },
      id: orderId,
      checkout_id: sessionId,
      permalink_url: `https://ledger.example.com/api/v1/oms/orders/${orderId}`,
      currency: 'EUR',
      fulfillment: { events: [] },
      adjustments: [],
      totals: [
        { type: 'subtotal', amount: 5500 },
        { type: 'fulfillment', amount: 490 },
        { type: 'total', amount: 5990 },
      ],
    });
    expect(order.line_items).toEqual([
      {
        id: `li_${variantA}`,
        item: { id: variantA, title: 'Espresso cup', price: 1250 },
        quantity: { original: 2, total: 2, fulfilled: 0 },
        totals: [
          { type: 'subtotal', amount: 2500 },
          { type: 'total', amount: 2500 },
        ],
        status: 'processing',
      },
      expect.objectContaining({ id: `li_${variantB}`, quantity: { original: 1, total: 1, fulfilled: 0 }, status: 'processing' }),
    ]);
    expect(order.fulfillment.expectations).toEqual([
      {
        id: 'package',
        line_items: [
          { id: `li_${variantA}`, quantity: 2 },
          { id: `li_${variantB}`, quantity: 1 },
        ],
        method_type: 'shipping',
        destination: ucpDestination,
        description: 'Standard shipping',
      },
    ]);
  });

  it('processing, shipped, delivered: fulfillment events appended in turn, every unit fulfilled once shipped', () => {
    const processing = orderAfter([{ status: 'processing', at: at(1) }]);
    const shipped = orderAfter([
      { status: 'processing', at: at(1) },
      { status: 'shipped', at: at(2) },
    ]);
    const delivered = orderAfter([
      { status: 'processing', at: at(1) },
      { status: 'shipped', at: at(2) },
      { status: 'delivered', at: at(3) },
    ]);
    for (const order of [processing, shipped, delivered]) expect(ucpOrderProblems(order)).toEqual([]);
    expect(processing.line_items.map((line) => [line.quantity, line.status])).toEqual([
      [{ original: 2, total: 2, fulfilled: 0 }, 'processing'],
      [{ original: 1, total: 1, fulfilled: 0 }, 'processing'],
    ]);
    expect(delivered.fulfillment.events.map((event) => [event.type, event.occurred_at])).toEqual([
      ['processing', '2026-11-26T12:01:00.000Z'],
      ['shipped', '2026-11-26T12:02:00.000Z'],
      ['delivered', '2026-11-26T12:03:00.000Z'],
    ]);
    for (const order of [shipped, delivered])
      expect(order.line_items.map((line) => [line.quantity, line.status])).toEqual([
        [{ original: 2, total: 2, fulfilled: 2 }, 'fulfilled'],
        [{ original: 1, total: 1, fulfilled: 1 }, 'fulfilled'],
      ]);
    expect(shipped.fulfillment.events[1]).toEqual({
      id: `${orderId}/shipped`,
      occurred_at: '2026-11-26T12:02:00.000Z',
      type: 'shipped',
      line_items: [
        { id: `li_${variantA}`, quantity: 2 },
        { id: `li_${variantB}`, quantity: 1 },
      ],
    });
  });

  it('cancelled: a cancellation adjustment taking every unit off, the lines removed', () => {
    const order = orderAfter([
      { status: 'processing', at: at(1) },
      { status: 'cancelled', at: at(4) },
    ]);
    expect(ucpOrderProblems(order)).toEqual([]);
    expect(order.adjustments).toEqual([
      {
        id: `${orderId}/cancellation`,
        type: 'cancellation',
        occurred_at: '2026-11-26T12:04:00.000Z',
        status: 'completed',
        line_items: [
          { id: `li_${variantA}`, quantity: -2 },
          { id: `li_${variantB}`, quantity: -1 },
        ],
      },
    ]);
    expect(order.line_items.map((line) => [line.quantity, line.status])).toEqual([
      [{ original: 2, total: 0, fulfilled: 0 }, 'removed'],
      [{ original: 1, total: 0, fulfilled: 0 }, 'removed'],
    ]);
    expect(order.fulfillment.events.map((event) => event.type)).toEqual(['processing']);
  });

  it('without a shipping address there is no expectation, and the order is still valid', () => {
    const order = orderAfter([], { fulfillmentDetails: null, selectedOptionId: null });
    expect(ucpOrderProblems(order)).toEqual([]);
    expect(order.fulfillment.expectations).toEqual([]);
  });

  it('the schema check bites: an order without its checkout, or with a line status UCP does not define, is refused', () => {
    const { checkout_id: _dropped, ...withoutCheckout } = orderAfter([]);
    expect(ucpOrderProblems(withoutCheckout)).not.toEqual([]);
    const order = orderAfter([]);
    expect(ucpOrderProblems({ ...order, line_items: [{ ...order.line_items[0], status: 'shipped' }] })).not.toEqual([]);
  });
});

describe("the order webhook's RFC 9421 signature", () => {
  const key = ucpSigningKeyOf('a-test-key', randomUUID(), randomUUID(), 1);
  const other = ucpSigningKeyOf('a-test-key', randomUUID(), randomUUID(), 1);
  const url = 'https://Platform.example:8443/webhooks/ucp/orders?tenant=42';
  const raw = JSON.stringify(orderAfter([]));
  const webhookId = randomUUID();
  const fields: [string, string][] = [
    ['ucp-agent', 'profile="https://ledger.example.com/api/v1/ucp/merchants/t/o/.well-known/ucp"'],
    ['idempotency-key', webhookId],
    ['webhook-id', webhookId],
    ['webhook-timestamp', '1795000000'],
  ];
  const signed = signRequest(key, { method: 'POST', url, headers: fields, body: raw, contentType: 'application/json' }, 1795000005);
  const received = (overrides: Record<string, string> = {}, body = raw) => ({
    method: 'POST',
    url: 'https://platform.example:8443/webhooks/ucp/orders?tenant=42',
    headers: { 'content-type': 'application/json', ...Object.fromEntries(fields), ...signed, ...overrides },
    raw: body,
  });

  it('covers the method, target, UCP-Agent, idempotency key, webhook id and time, and the body; verifies with the profile key', () => {
    expect(signed['signature-input']).toBe(
      `sig1=("@method" "@authority" "@path" "@query" "ucp-agent" "idempotency-key" "webhook-id" "webhook-timestamp" "content-digest" "content-type");created=1795000005;keyid="${key.publicJwk.kid}"`,
    );
    expect(ucpRequestSignatureProblems(received(), [other.publicJwk, key.publicJwk])).toEqual([]);
  });

  it('fails with another key, another body, another event id or another target', () => {
    expect(ucpRequestSignatureProblems(received(), [{ ...other.publicJwk, kid: key.publicJwk.kid }])).toEqual(['signature_invalid']);
    expect(ucpRequestSignatureProblems(received({}, `${raw} `), [key.publicJwk])).toContain(
      'digest_mismatch: Content-Digest is not the body’s',
    );
    expect(ucpRequestSignatureProblems(received({ 'webhook-id': randomUUID() }), [key.publicJwk])).toEqual(['signature_invalid']);
    const elsewhere = { ...received(), url: 'https://platform.example:8443/webhooks/other?tenant=42' };
    expect(ucpRequestSignatureProblems(elsewhere, [key.publicJwk])).toEqual(['signature_invalid']);
  });
});
