import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cart } from '../../commands/acp/checkout-cart.ts';
import { FakeLedger } from '../support/fake-ledger.ts';
import { newCaller, routeApp, type Caller } from '../support/route-app.ts';

const at = new Date('2026-11-26T10:00:00.000Z');
const [tenantId, orgId, sessionId, orderId, variantId, productId] = [
  randomUUID(),
  randomUUID(),
  randomUUID(),
  randomUUID(),
  randomUUID(),
  randomUUID(),
];
const address = { name: 'Ada Lovelace', line_one: '1 Rue de la Paix', city: 'Paris', state: 'IDF', country: 'FR', postal_code: '75002' };
const buyer = { email: 'ada@example.com', first_name: 'Ada' };
const cart: Cart = {
  currency: 'EUR',
  lines: [{ itemId: variantId, productId, name: 'Espresso cup', sku: 'CUP', quantity: 2, unitPrice: '12.50', available: 4 }],
  shippingOptions: [{ id: 'standard', title: 'Standard shipping', price: '0' }],
  selectedOptionId: 'standard',
  fulfillmentDetails: JSON.stringify({ name: 'Ada Lovelace', address }),
  buyer: JSON.stringify(buyer),
};
const session = {
  id: sessionId,
  tenant_id: tenantId,
  org_id: orgId,
  status: 'completed',
  currency: 'EUR',
  cart,
  subtotal: '25.00',
  shipping_total: '0.00',
  total: '25.00',
  order_id: orderId,
  attempt: 0,
  last_failure: null,
  created_at: at,
  updated_at: at,
};

let app: FastifyInstance;
let owner: Caller;
beforeAll(async () => {
  ({ app } = await routeApp(new FakeLedger({ checkout_sessions: [session], catalog_feeds: [] })));
  owner = await newCaller({ tenantId, orgId });
});
afterAll(() => app.close());

const read = (caller: Caller, id: string) =>
  app.inject({ method: 'GET', url: `/api/v1/ucp/checkout-sessions/${id}`, headers: caller.headers });

describe("the tenant's own read of a checkout session", () => {
  it('shows the buyer and the fulfillment details the agent gave, and the order the session placed', async () => {
    const response = await read(owner, sessionId.toUpperCase());
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      id: sessionId,
      status: 'completed',
      buyer,
      fulfillment_details: { name: 'Ada Lovelace', address },
      order: { id: orderId, checkout_session_id: sessionId },
    });
  });

  it("answers another tenant's or org's session, and an id that is none, 404 in the one error body", async () => {
    for (const caller of [await newCaller(), await newCaller({ tenantId })]) {
      const response = await read(caller, sessionId);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
      expect(response.body).not.toContain('ada@example.com');
    }
    expect((await read(owner, randomUUID())).statusCode).toBe(404);
    expect((await read(owner, 'cs_not_a_uuid')).statusCode).toBe(400);
  });

  it('needs a user of the tenant: without a token it is 401', async () => {
    const response = await app.inject({ method: 'GET', url: `/api/v1/ucp/checkout-sessions/${sessionId}` });
    expect(response.statusCode).toBe(401);
  });
});
