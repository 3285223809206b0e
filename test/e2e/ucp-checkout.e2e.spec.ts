import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { acpAgent, acpAgentCheckout } from '../support/acp-agent.ts';
import { configureFeed, ok, ordersOfSession, stockedProduct, twoFeedItems, ucpProfile } from '../support/agentic-catalog.ts';
import { SELLER_PAGES } from '../support/feed-settings.ts';
import { stockLevel } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';
import { ucpPlatform } from '../support/ucp-platform.ts';
import { ucpResponseSignatureProblems } from '../support/ucp-signatures.ts';
import type { Tenant } from '../support/client.ts';
import { ucpBuyer as buyer, ucpDestination as destination } from '../support/ucp-buyer.ts';

/**
 * UCP's checkout over REST (2026-04-08), driven over HTTP as a platform would: it finds the tenant's `dev.ucp.shopping`
 * endpoint in its public profile, then creates, updates and completes a session of two feed items. Every request is
 * checked against UCP's request schema for its operation before it is sent, every answer against UCP's OpenAPI
 * (status) and schemas (body) when it comes (test/support/ucp-platform.ts).
 */
const storageDir = mkdtempSync(path.join(tmpdir(), 'ucp-store-'));
const ctx = useServiceAndTenant({ env: { STORAGE_DIR: storageDir, FEED_QUIET_MS: '200', FEED_MAX_DELAY_MS: '1000' } });

const cardPayment = (token: string) => ({
  instruments: [{ id: 'instr_1', handler_id: 'card_tokenized', type: 'card', selected: true, credential: { type: 'token', token } }],
});

/** The platform the tenant's profile points to: its dev.ucp.shopping REST endpoint, with the tenant's API key. */
async function platformOf(tenant: Tenant) {
  const checkout = await acpAgentCheckout(tenant);
  const profile = await ucpProfile(checkout);
  const [service] = profile.ucp.services['dev.ucp.shopping'] as { transport: string; endpoint: string }[];
  expect(service).toMatchObject({ transport: 'rest', endpoint: expect.stringContaining(`/api/v1/ucp/shopping/${tenant.tenantId}/`) });
  expect(profile.ucp.capabilities['dev.ucp.shopping.checkout']).toEqual([expect.objectContaining({ version: '2026-04-08' })]);
  return { checkout, profile, platform: ucpPlatform(service?.endpoint ?? '', checkout.api_key) };
}

describe('UCP checkout over REST (2026-04-08)', () => {
  it('a platform finds the endpoint in the profile, fills a session of two feed items, completes it: one confirmed order, however it retries', async () => {
    const { tenant } = ctx;
    // The item ids a platform sends are the ids the feed's variants carry.
    const { cup, pot, cupItem, potItem } = await twoFeedItems(ctx.service.baseUrl, tenant);

    const { checkout, platform, profile } = await platformOf(tenant);
    const created = ok(
      await platform.create({
        line_items: [
          { item: { id: cupItem }, quantity: 1 },
          { item: { id: potItem }, quantity: 1 },
        ],
      }),
      201,
    );
    expect(created).toMatchObject({
      ucp: { version: '2026-04-08', status: 'success', capabilities: { 'dev.ucp.shopping.checkout': [{ version: '2026-04-08' }] } },
      status: 'incomplete',
      currency: 'EUR',
      line_items: [
        { item: { id: cupItem, title: 'Espresso cup', price: 1250 }, quantity: 1 },
        { item: { id: potItem, title: 'Moka pot', price: 3000 }, quantity: 1 },
      ],
      links: [
        { type: 'terms_of_service', url: SELLER_PAGES.termsOfServiceUrl },
        { type: 'privacy_policy', url: SELLER_PAGES.privacyPolicyUrl },
        { type: 'refund_policy', url: SELLER_PAGES.returnPolicyUrl },
      ],
    });
    expect(created.messages.map((message: any) => [message.code, message.path])).toEqual([
      ['missing', '$.fulfillment.methods[0].destinations'],
      ['missing', '$.fulfillment.methods[0].groups[0].selected_option_id'],
    ]);
    expect(created.fulfillment.methods[0].groups[0].options).toEqual([
      { id: 'standard', title: 'Standard shipping', totals: [{ type: 'total', amount: 490 }] },
    ]);

    // Two cups, the buyer, where to ship and how: UCP's PUT replaces the session with what it sends.
    const lineIds = created.line_items.map((line: any) => line.id as string);
    const update = {
      line_items: [
        { id: lineIds[0], item: { id: cupItem }, quantity: 2 },
        { id: lineIds[1], item: { id: potItem }, quantity: 1 },
      ],
      buyer,
      fulfillment: {
        methods: [
          {
            type: 'shipping',
            line_item_ids: lineIds,
            destinations: [{ id: 'home', ...destination }],
            selected_destination_id: 'home',
            groups: [{ id: 'package', selected_option_id: 'standard' }],
          },
        ],
      },
    };
    const updated = ok(await platform.update(created.id, update), 200);
    expect(updated).toMatchObject({ id: created.id, status: 'ready_for_complete', messages: [], buyer });
    expect(updated.line_items.map((line: any) => line.quantity)).toEqual([2, 1]);
    expect(updated.totals).toEqual([
      { type: 'subtotal', amount: 5500 },
      { type: 'fulfillment', amount: 490 },
      { type: 'total', amount: 5990 },
    ]);
    expect(updated.fulfillment.methods[0]).toMatchObject({
      type: 'shipping',
      destinations: [{ ...destination, id: 'destination' }],
      selected_destination_id: 'destination',
      groups: [{ selected_option_id: 'standard' }],
    });
    // The same update retried with its key answers the session as it is, and changes nothing.
    const updateKey = randomUUID();
    ok(await platform.update(created.id, update, { idempotencyKey: updateKey }), 200);
    ok(await platform.update(created.id, update, { idempotencyKey: updateKey }), 200);

    // The same complete three times at once (two with one key), then three times more in turn with that key.
    const token = `tok_${randomUUID()}`;
    const body = { payment: cardPayment(token) };
    const key = randomUUID();
    const concurrent = await Promise.all([
      platform.complete(created.id, body, { idempotencyKey: key }),
      platform.complete(created.id, body, { idempotencyKey: key }),
      platform.complete(created.id, body),
    ]);
    const sequential = [];
    for (let i = 0; i < 3; i++) sequential.push(await platform.complete(created.id, body, { idempotencyKey: key }));
    const answers = [...concurrent, ...sequential].map((answer) => ok(answer, 200));
    // Each completion answer is signed by the tenant: it verifies with the key its profile publishes under that kid.
    for (const answer of [...concurrent, ...sequential]) expect(ucpResponseSignatureProblems(answer, profile.signing_keys)).toEqual([]);
    const orderId = answers[0].order.id as string;
    for (const answer of answers)
      expect(answer).toMatchObject({ status: 'completed', order: { id: orderId, permalink_url: expect.any(String) } });

    // One order, through the order pipeline: confirmed, the stock reserved, the delegated token recorded.
    expect((await ordersOfSession(tenant, created.id)).map((order) => order.id)).toEqual([orderId]);
    expect(ok(await tenant.request('GET', `/api/v1/oms/orders/${orderId}`), 200)).toMatchObject({
      status: 'confirmed',
      currency: 'EUR',
      subtotal: '55.00',
      shipping_total: '4.90',
      total: '59.90',
      payment_provider: 'card_tokenized',
      payment_transaction_id: token,
      sales_channel: 'ucp',
    });
    expect(await stockLevel(tenant, cup)).toMatchObject({ available: 8, reserved: 2 });
    expect(await stockLevel(tenant, pot)).toMatchObject({ available: 2, reserved: 1 });
    expect(ok(await platform.get(created.id), 200)).toMatchObject({ status: 'completed', order: { id: orderId } });

    // The same session, read through ACP's binding and by the merchant: one session, two protocols.
    expect(ok(await acpAgent(checkout).get(created.id), 200)).toMatchObject({
      id: created.id,
      status: 'completed',
      order: { id: orderId },
    });
    expect(ok(await tenant.request('GET', `/api/v1/ucp/checkout-sessions/${created.id}`), 200)).toMatchObject({
      buyer,
      fulfillment_details: { address: { line_one: destination.street_address, city: 'Paris', postal_code: '75002', country: 'FR' } },
    });

    // A completed session cannot be canceled: a business outcome, the session untouched.
    expect(ok(await platform.cancel(created.id), 200)).toMatchObject({
      ucp: { status: 'error' },
      messages: [{ type: 'error', code: 'not_cancelable', severity: 'unrecoverable' }],
    });
  });

  it("another tenant's platform does not see the session; a request without credentials is refused", async () => {
    const { tenant } = ctx;
    const lamp = await stockedProduct(tenant, 'Desk lamp', '45.00', 2);
    const { platform, checkout } = await platformOf(tenant);
    const session = ok(await platform.create({ line_items: [{ item: { id: lamp.variantId }, quantity: 1 }] }), 201);

    const other = await ctx.newTenant();
    const { platform: theirs, checkout: theirCheckout } = await platformOf(other);
    // Their own endpoint, their own key: our session is none of theirs, as an unknown id is.
    for (const id of [session.id as string, randomUUID()])
      expect(ok(await theirs.get(id), 200)).toMatchObject({
        ucp: { status: 'error' },
        messages: [{ type: 'error', code: 'not_found', severity: 'unrecoverable' }],
      });
    // Their key at our endpoint opens nothing.
    const base = (await platformOf(tenant)).profile.ucp.services['dev.ucp.shopping'][0].endpoint as string;
    expect(ok(await ucpPlatform(base, theirCheckout.api_key).get(session.id), 401)).toMatchObject({ code: 'unauthorized' });
    expect(ok(await platform.get(session.id, { anonymous: true }), 401)).toMatchObject({ code: 'unauthorized' });
    expect(
      ok(await platform.create({ line_items: [{ item: { id: lamp.variantId }, quantity: 1 }] }, { anonymous: true }), 401),
    ).toMatchObject({
      code: 'unauthorized',
    });
    // Nothing was opened by the refused create; ours is still as it was.
    expect(ok(await ucpPlatform(base, checkout.api_key).get(session.id), 200)).toMatchObject({ id: session.id, status: 'incomplete' });
  });

  it('out of stock at completion: the session answered again, incomplete, saying which line; no order, nothing reserved', async () => {
    const tenant = await ctx.newTenant();
    await configureFeed(tenant);
    const lamp = await stockedProduct(tenant, 'Desk lamp', '45.00', 1);
    const { platform } = await platformOf(tenant);
    const fulfillment = {
      methods: [{ type: 'shipping', destinations: [destination], groups: [{ selected_option_id: 'standard' }] }],
    };
    const session = ok(await platform.create({ line_items: [{ item: { id: lamp.variantId }, quantity: 1 }], buyer, fulfillment }), 201);
    expect(session.status).toBe('ready_for_complete');
    ok(await tenant.request('PUT', `/api/v1/oms/inventory/levels/${lamp.variantId}/${lamp.locationId}`, { available: 0 }), 200);

    const after = ok(await platform.complete(session.id, { payment: cardPayment('tok_short') }), 200);
    expect(after).toMatchObject({ ucp: { status: 'success' }, id: session.id, status: 'incomplete' });
    expect(after.messages).toEqual([
      expect.objectContaining({ type: 'error', code: 'out_of_stock', path: '$.line_items[0]', severity: 'recoverable' }),
    ]);
    expect(await ordersOfSession(tenant, session.id)).toEqual([]);
    expect(await stockLevel(tenant, lamp)).toMatchObject({ available: 0, reserved: 0 });
  });
});
