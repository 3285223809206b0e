import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { acpCredentialsOf, requestSignature } from '../../commands/acp/acp-credentials.ts';
import { checkoutSessionIdOf } from '../../commands/acp/checkout-session.ts';
import { orderIdOf } from '../../commands/oms/order.ts';
import { DEVELOPMENT_WEBHOOK_SECRET_KEY } from '../../commands/integrations/webhook-secret.ts';
import { acpDeclaresStatus, acpProblems } from '../support/acp-checkout-schema.ts';
import { checkoutRouteCatalog } from '../support/checkout-route-catalog.ts';
import type { Decision, FakeLedger } from '../support/fake-ledger.ts';
import { routeApp } from '../support/route-app.ts';

const at = new Date('2026-11-26T10:00:00.000Z');
const catalog = checkoutRouteCatalog(at);
const { tenantId, orgId, otherTenant, productId, variantId, locationId, opened } = catalog;
const credentials = acpCredentialsOf(DEVELOPMENT_WEBHOOK_SECRET_KEY, tenantId, orgId, 0);
const base = `/api/v1/ucp/acp/${tenantId}/${orgId}`;

let app: FastifyInstance;
let ledger: FakeLedger;

beforeAll(async () => {
  ({ app, ledger } = await routeApp(catalog.ledger()));
});
afterAll(() => app.close());
beforeEach(() => ledger.reset(opened, 'checkout_sessions'));

type Options = { headers?: Record<string, string>; secret?: string; omit?: string[] };

/** An agent's signed request, its body checked against ACP's schema as the protocol's client would send it. */
const agent = (
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  { headers = {}, secret = credentials.signingSecret, omit = [] }: Options = {},
) => {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const url = `${base}${path}`;
  const timestamp = new Date().toISOString();
  const all: Record<string, string> = {
    authorization: `Bearer ${credentials.apiKey}`,
    'api-version': '2026-04-17',
    timestamp,
    signature: requestSignature(secret, timestamp, method, url, payload),
    ...(payload ? { 'content-type': 'application/json' } : {}),
    ...(method === 'POST' ? { 'idempotency-key': 'key-1' } : {}),
    ...headers,
  };
  for (const name of omit) delete all[name];
  return app.inject({ method, url, headers: all, ...(payload ? { payload } : {}) });
};

/** The answer, judged by ACP's OpenAPI (status) and JSON Schema (body). */
const judged = (response: { statusCode: number; json: () => any }, operationPath: string, method: string, definition: string) => {
  const body = response.json();
  expect(response.statusCode === 401 || acpDeclaresStatus(method, operationPath, response.statusCode)).toBe(true);
  expect(acpProblems(response.statusCode >= 400 ? 'Error' : definition, body)).toEqual([]);
  return body;
};

const createBody = { line_items: [{ id: variantId }, { id: variantId }], currency: 'eur', capabilities: {} };

describe('ACP checkout routes', () => {
  it('opens a session priced from the catalog and the stock, under the id its Idempotency-Key derives', async () => {
    expect(acpProblems('CheckoutSessionCreateRequest', createBody)).toEqual([]);
    const response = await agent('POST', '/checkout_sessions', createBody);
    expect(response.statusCode).toBe(201);
    const session = judged(response, '/checkout_sessions', 'POST', 'CheckoutSession');
    const sessionId = checkoutSessionIdOf(tenantId, orgId, 'key-1');
    expect(ledger.sent).toEqual([expect.objectContaining({ aggregate: 'checkout-session', type: 'OpenCheckoutSession', tenantId, orgId })]);
    expect(ledger.sent[0]?.data).toMatchObject({
      sessionId,
      currency: 'EUR',
      lines: [{ itemId: variantId, productId, name: 'Espresso cup', sku: 'CUP', quantity: 2, unitPrice: '12.50', available: 4 }],
      shippingOptions: [{ id: 'standard', title: 'Standard shipping', price: '0' }],
    });
    expect(ledger.sent[0]?.idempotency).toMatchObject({ key: sessionId });
    expect(session).toMatchObject({
      id: sessionId,
      status: 'not_ready_for_payment',
      currency: 'eur',
      line_items: [{ quantity: 2, unit_amount: 1250 }],
    });
  });

  it('refuses an item that is not ours to sell, naming it', async () => {
    const response = await agent('POST', '/checkout_sessions', { ...createBody, line_items: [{ id: randomUUID() }] });
    expect(response.statusCode).toBe(400);
    expect(judged(response, '/checkout_sessions', 'POST', 'CheckoutSession')).toMatchObject({
      code: 'invalid',
      param: '$.line_items[0].id',
    });
    expect(ledger.sent).toEqual([]);
  });

  it.each([
    ['no API-Version', { omit: ['api-version'] }, 400, 'missing_api_version'],
    ['an unsupported API-Version', { headers: { 'api-version': '2025-09-29' } }, 400, 'unsupported_api_version'],
    ['no Idempotency-Key', { omit: ['idempotency-key'] }, 400, 'idempotency_key_required'],
    ['no signature', { omit: ['signature'] }, 401, 'invalid_signature'],
    ['a forged signature', { secret: 'acpsig_forged' }, 401, 'invalid_signature'],
    ['no API key', { omit: ['authorization'] }, 401, 'unauthorized'],
    [
      "another tenant's API key",
      { headers: { authorization: `Bearer ${acpCredentialsOf(DEVELOPMENT_WEBHOOK_SECRET_KEY, otherTenant, orgId, 0).apiKey}` } },
      401,
      'unauthorized',
    ],
  ] as const)('refuses a request with %s, sending nothing', async (_what, options, status, code) => {
    const response = await agent('POST', '/checkout_sessions', createBody, options as Options);
    expect(response.statusCode).toBe(status);
    expect(judged(response, '/checkout_sessions', 'POST', 'CheckoutSession')).toMatchObject({ type: 'invalid_request', code });
    expect(ledger.sent).toEqual([]);
  });

  it("answers 404 for another tenant's session and for an id that is none of ours", async () => {
    await agent('POST', '/checkout_sessions', createBody);
    const theirs = ledger.tables.checkout_sessions?.[0];
    if (theirs) theirs.tenant_id = otherTenant;
    ledger.sent.length = 0;
    for (const id of [String(theirs?.id), 'cs_not_a_uuid']) {
      const response = await agent('GET', `/checkout_sessions/${id}`);
      expect(response.statusCode).toBe(404);
      expect(judged(response, '/checkout_sessions/{checkout_session_id}', 'GET', 'CheckoutSession')).toMatchObject({ code: 'not_found' });
    }
    expect(ledger.sent).toEqual([]);
  });

  it('completes a session whose completion was started (a retry after a crash) with the order already chosen, once', async () => {
    await agent('POST', '/checkout_sessions', createBody);
    const row = ledger.tables.checkout_sessions?.[0] as Record<string, any>;
    const chosen = randomUUID();
    const address = { name: 'Ada', line_one: '1 Rue', city: 'Paris', state: 'IDF', country: 'FR', postal_code: '75002' };
    const cart = { ...row.cart, selectedOptionId: 'standard', fulfillmentDetails: JSON.stringify({ address }) };
    // The first request recorded the reservation; the inventory holds it, ahead of the order, under the order's id.
    const reservation = JSON.stringify([{ lineIndex: 0, variantId, locationId, quantity: 2 }]);
    Object.assign(row, { status: 'complete_in_progress', order_id: chosen, cart, reservation });
    ledger.tables.stock_reservations = [{ order_id: chosen, status: 'held' }];
    ledger.sent.length = 0;
    ledger.decide = (command): Decision => {
      if (command.type === 'PlaceOrder') {
        const order = { id: chosen, tenant_id: tenantId, org_id: orgId, status: 'confirmed', rejection: null, line_items: [{ variantId }] };
        return { rows: { orders: [order] } };
      }
      if (command.type === 'CompleteCheckoutSession') return { rows: { checkout_sessions: [{ ...row, status: 'completed' }] } };
      return {};
    };
    const payment = { handler_id: 'card_tokenized', instrument: { type: 'card', credential: { type: 'spt', token: 'spt_1' } } };
    expect(acpProblems('CheckoutSessionCompleteRequest', { payment_data: payment })).toEqual([]);
    const response = await agent('POST', `/checkout_sessions/${String(row.id)}/complete`, { payment_data: payment });
    expect(response.statusCode).toBe(200);
    const body = judged(response, '/checkout_sessions/{checkout_session_id}/complete', 'POST', 'CheckoutSessionWithOrder');
    expect(body).toMatchObject({ status: 'completed', order: { id: chosen, checkout_session_id: row.id, status: 'confirmed' } });
    expect(ledger.sent.map((command) => [command.type, command.data.orderId])).toEqual([
      ['StartCheckoutCompletion', chosen],
      ['PlaceOrder', chosen],
      ['CompleteCheckoutSession', chosen],
    ]);
    expect(ledger.sent[1]?.data).toMatchObject({
      paymentProvider: 'card_tokenized',
      paymentTransactionId: 'spt_1',
      shippingTotal: '0',
      reservedAhead: true,
      lines: [{ variantId, locationId, quantity: 2, unitPrice: '12.50' }],
    });
  });

  it('places no order when the inventory refuses the stock the read model still showed (out of stock in between)', async () => {
    await agent('POST', '/checkout_sessions', createBody);
    const row = ledger.tables.checkout_sessions?.[0] as Record<string, any>;
    const address = { name: 'Ada', line_one: '1 Rue', city: 'Paris', state: 'IDF', country: 'FR', postal_code: '75002' };
    Object.assign(row, { cart: { ...row.cart, selectedOptionId: 'standard', fulfillmentDetails: JSON.stringify({ address }) } });
    ledger.sent.length = 0;
    const orderId = orderIdOf(tenantId, orgId, `checkout:${String(row.id)}:0`);
    ledger.decide = (command): Decision => {
      if (command.type !== 'StartCheckoutCompletion') return {};
      const reservation = JSON.stringify(command.data.reservation);
      // Another order took the units after the edge read the levels: the inventory refuses what the session asked.
      return {
        rows: {
          checkout_sessions: [{ ...row, status: 'complete_in_progress', order_id: command.data.orderId, reservation }],
          stock_reservations: [{ order_id: orderId, status: 'refused' }],
        },
      };
    };
    const payment = { handler_id: 'card_tokenized', instrument: { type: 'card', credential: { type: 'spt', token: 'spt_2' } } };
    const response = await agent('POST', `/checkout_sessions/${String(row.id)}/complete`, { payment_data: payment });
    expect(response.statusCode).toBe(400);
    expect(judged(response, '/checkout_sessions/{checkout_session_id}/complete', 'POST', 'CheckoutSessionWithOrder')).toMatchObject({
      type: 'invalid_request',
      code: 'out_of_stock',
      param: '$.line_items[0]',
    });
    expect(ledger.sent.map((command) => command.type)).toEqual(['StartCheckoutCompletion', 'FailCheckoutCompletion']);
    expect(ledger.sent[0]?.data).toMatchObject({ orderId, reservation: [{ lineIndex: 0, variantId, locationId, quantity: 2 }] });
  });

  it('answers a retried complete whose completion failed since (given up by the completion sweeper) with that failure', async () => {
    await agent('POST', '/checkout_sessions', createBody);
    const row = ledger.tables.checkout_sessions?.[0] as Record<string, any>;
    const address = { name: 'Ada', line_one: '1 Rue', city: 'Paris', state: 'IDF', country: 'FR', postal_code: '75002' };
    const given = orderIdOf(tenantId, orgId, `checkout:${String(row.id)}:0`);
    Object.assign(row, {
      status: 'ready_for_payment',
      attempt: 1,
      cart: { ...row.cart, selectedOptionId: 'standard', fulfillmentDetails: JSON.stringify({ address }) },
      last_failure: { order_id: given, reason: 'abandoned', message: 'the order could not be placed' },
    });
    ledger.sent.length = 0;
    // The key's StartCheckoutCompletion was decided before: a replay, nothing new.
    ledger.decide = (command): Decision => (command.type === 'StartCheckoutCompletion' ? { replayed: true } : {});
    const payment = { handler_id: 'card_tokenized', instrument: { type: 'card', credential: { type: 'spt', token: 'spt_3' } } };
    const response = await agent('POST', `/checkout_sessions/${String(row.id)}/complete`, { payment_data: payment });
    expect(response.statusCode).toBe(400);
    expect(judged(response, '/checkout_sessions/{checkout_session_id}/complete', 'POST', 'CheckoutSessionWithOrder')).toMatchObject({
      code: 'processing_error',
      message: 'the order could not be placed',
    });
    expect(ledger.sent.map((command) => command.type)).toEqual(['StartCheckoutCompletion']);
  });

  it('answers 503 as an ACP service_unavailable error while Kafka is down', async () => {
    ledger.down.add('kafka');
    const response = await agent('POST', '/checkout_sessions', createBody);
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('2');
    expect(judged(response, '/checkout_sessions', 'POST', 'CheckoutSession')).toMatchObject({ type: 'service_unavailable' });
  });
});
