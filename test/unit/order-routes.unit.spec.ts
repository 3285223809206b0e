import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { orderIdOf } from '../../commands/oms/order.ts';
import { FakeLedger, type SentCommand } from '../support/fake-ledger.ts';
import { orderRequest } from '../support/orders.ts';
import { newCaller, routeApp, type Caller } from '../support/route-app.ts';

const at = new Date('2025-01-02T03:04:05.000Z');

/** The OMS read model's row for an order (with its status history, which the query aggregates), as projected. */
const orderRow = (owner: Pick<Caller, 'tenantId' | 'orgId'>, fields: Record<string, unknown> = {}) => ({
  id: randomUUID(),
  tenant_id: owner.tenantId,
  org_id: owner.orgId,
  status: 'confirmed',
  idempotency_key: 'key-1',
  currency: 'USD',
  customer_id: null,
  sales_channel: null,
  platform: null,
  payment_provider: 'stripe',
  payment_transaction_id: 'pi_12345678',
  payment_status: 'authorized',
  subtotal: '10.00',
  discount_total: '0.00',
  shipping_total: '0.00',
  tax_total: '0.00',
  total: '10.00',
  tags: [],
  line_items: [
    {
      name: 'Gift card',
      quantity: 1,
      unitPrice: '10.00',
      lineTotal: '10.00',
      variantId: null,
      locationId: null,
      sku: null,
      variantLabel: null,
      requiresShipment: true,
    },
  ],
  rejection: null,
  status_history: [{ status: 'confirmed', requested_status: null, outcome: 'applied', reason: null, at: at.toISOString() }],
  created_at: at,
  updated_at: at,
  ...fields,
});

/** What the OMS projection makes of a PlaceOrder the order's writer confirmed. */
const confirm = (command: SentCommand) => {
  const { orderId, idempotencyKey } = command.data;
  return { rows: { orders: [orderRow(command, { id: orderId, idempotency_key: idempotencyKey })] } };
};

let app: FastifyInstance;
let ledger: FakeLedger;
let caller: Caller;

beforeAll(async () => {
  ({ app, ledger } = await routeApp());
  caller = await newCaller();
});
afterAll(() => app.close());
beforeEach(() => ledger.reset(confirm, 'orders'));

const place = (body: object, headers = caller.headers) => app.inject({ method: 'POST', url: '/api/v1/oms/orders', headers, payload: body });

describe('POST /api/v1/oms/orders', () => {
  it('places the order under the id derived from its idempotency key and answers 201 with the decided order', async () => {
    const body = orderRequest({ idempotency_key: 'checkout-42', tags: ['gift'] });
    const response = await place(body);
    expect(response.statusCode).toBe(201);
    const orderId = orderIdOf(caller.tenantId, caller.orgId, 'checkout-42');
    expect(ledger.sent).toEqual([
      expect.objectContaining({ aggregate: 'order', type: 'PlaceOrder', tenantId: caller.tenantId, orgId: caller.orgId, awaited: true }),
    ]);
    expect(ledger.sent[0]?.data).toMatchObject({
      orderId,
      idempotencyKey: 'checkout-42',
      currency: 'USD',
      tags: ['gift'],
      lines: [{ name: 'Gift card', quantity: 1, unitPrice: '10.00', variantId: null, requiresShipment: true }],
    });
    expect(response.json()).toMatchObject({
      id: orderId,
      status: 'confirmed',
      total: '10.00',
      line_items: [{ name: 'Gift card', unit_price: '10.00', line_total: '10.00', requires_shipment: true }],
      status_history: [{ status: 'confirmed', outcome: 'applied', at: at.toISOString() }],
      created_at: at.toISOString(),
    });
  });

  it('answers 409 naming the line when the read model shows the order rejected', async () => {
    ledger.decide = (command) => ({
      rows: {
        orders: [
          orderRow(command, {
            id: command.data.orderId,
            status: 'rejected',
            rejection: { reason: 'insufficient_stock', message: 'only 1 available', line_index: 0 },
          }),
        ],
      },
    });
    const response = await place(orderRequest());
    expect(response.statusCode).toBe(409);
    expect(response.json().error).toEqual({
      code: 'conflict',
      message: expect.stringContaining('was not confirmed: only 1 available'),
      details: [{ path: 'body.line_items.0', message: 'only 1 available' }],
    });
  });

  it('answers 503 when the outcome does not show in the read model in time', async () => {
    ledger.decide = () => ({});
    const response = await place(orderRequest());
    expect(response.statusCode).toBe(503);
    expect(response.json().error.message).toContain('did not answer in time');
  });

  it('refuses a malformed order with the documented 400 and sends nothing', async () => {
    const response = await place(orderRequest({ payment_transaction_id: 'nope', line_items: [] }));
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({
      code: 'validation_failed',
      message: 'the body fields line_items and payment_transaction_id are invalid',
    });
    expect(
      response
        .json()
        .error.details.map(({ path }: { path: string }) => path)
        .sort(),
    ).toEqual(['body.line_items', 'body.payment_transaction_id']);
    expect(ledger.sent).toEqual([]);
  });

  it('answers 401 without a token and 403 with another tenant’s, sending nothing', async () => {
    const { authorization: _, ...withoutToken } = caller.headers;
    expect((await place(orderRequest(), withoutToken)).statusCode).toBe(401);
    const other = await newCaller();
    expect((await place(orderRequest(), { ...caller.headers, authorization: other.headers.authorization! })).statusCode).toBe(403);
    expect(ledger.sent).toEqual([]);
  });

  it('answers 503 with Retry-After while Postgres is down', async () => {
    ledger.down.add('postgres');
    const response = await place(orderRequest());
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('2');
    expect(ledger.sent).toEqual([]);
  });
});

describe('GET /api/v1/oms/orders/:orderID and its status', () => {
  it('reads the caller’s order; another tenant’s, or one still pending, is a 404', async () => {
    const mine = orderRow(caller);
    const pending = orderRow(caller, { status: 'pending' });
    const theirs = orderRow({ tenantId: randomUUID(), orgId: randomUUID() });
    ledger.tables.orders = [mine, pending, theirs];
    const read = (id: string) => app.inject({ method: 'GET', url: `/api/v1/oms/orders/${id}`, headers: caller.headers });
    expect((await read(mine.id)).json()).toMatchObject({ id: mine.id, status: 'confirmed' });
    for (const hidden of [pending, theirs]) {
      const response = await read(hidden.id);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ error: { code: 'not_found', message: `order ${hidden.id} not found`, details: [] } });
    }
    const list = await app.inject({ method: 'GET', url: '/api/v1/oms/orders', headers: caller.headers });
    expect(list.json()).toMatchObject({ total: 1, data: [{ id: mine.id }] });
  });

  it('dispatches a status request for the caller’s order (202), and refuses one for another tenant’s order (404)', async () => {
    const mine = orderRow(caller);
    const theirs = orderRow({ tenantId: randomUUID(), orgId: caller.orgId });
    ledger.tables.orders = [mine, theirs];
    const request = (id: string) =>
      app.inject({ method: 'POST', url: `/api/v1/oms/orders/${id}/status`, headers: caller.headers, payload: { status: 'processing' } });
    const accepted = await request(mine.id);
    expect(accepted.statusCode).toBe(202);
    expect(accepted.headers.location).toBe(`/api/v1/oms/orders/${mine.id}`);
    expect(accepted.json()).toEqual({ order_id: mine.id, requested_status: 'processing' });
    expect((await request(theirs.id)).statusCode).toBe(404);
    expect(ledger.sent).toEqual([
      expect.objectContaining({ type: 'RequestOrderStatus', data: { orderId: mine.id, status: 'processing' }, awaited: false }),
    ]);
  });

  it('answers a status request 503 while Kafka is down', async () => {
    const mine = orderRow(caller);
    ledger.tables.orders = [mine];
    ledger.down.add('kafka');
    const response = await app.inject({
      method: 'POST',
      url: `/api/v1/oms/orders/${mine.id}/status`,
      headers: caller.headers,
      payload: { status: 'processing' },
    });
    expect(response.statusCode).toBe(503);
    expect(ledger.sent).toEqual([]);
  });
});
