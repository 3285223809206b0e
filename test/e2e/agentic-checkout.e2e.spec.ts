import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutSessionAggregate } from '../../commands/acp/checkout-session.ts';
import { orderAggregate } from '../../commands/oms/order.ts';
import { acpWebhookProblems } from '../support/acp-checkout-schema.ts';
import { readEvents } from '../support/event-log.ts';
import { startHookReceiver } from '../support/notice-receivers.ts';
import { eventually, stockLevel } from '../support/orders.ts';
import { acpAgent, acpAgentCheckout } from '../support/acp-agent.ts';
import { SELLER_PAGES } from '../support/feed-settings.ts';
import { configureFeed, ok, ordersOfSession, stockedProduct, twoFeedItems, ucpProfile } from '../support/agentic-catalog.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const storageDir = mkdtempSync(path.join(tmpdir(), 'acp-store-'));
const ctx = useServiceAndTenant({
  env: { STORAGE_DIR: storageDir, FEED_QUIET_MS: '200', FEED_MAX_DELAY_MS: '1000', NOTICE_ALLOW_PRIVATE_NETWORKS: 'true' },
});

const address = { name: 'Ada Lovelace', line_one: '1 Rue de la Paix', city: 'Paris', state: 'IDF', country: 'FR', postal_code: '75002' };
const payment = { handler_id: 'card_tokenized', instrument: { type: 'card', credential: { type: 'spt', token: `spt_${randomUUID()}` } } };

let hooks: Awaited<ReturnType<typeof startHookReceiver>>;
beforeAll(async () => {
  hooks = await startHookReceiver();
});
afterAll(() => hooks.close());

/** The agent platform's check of an order event: ACP's `Merchant-Signature`, recomputed with the secret it was given. */
const signedBy = (secret: string, header: string, body: string): boolean => {
  const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) ?? [];
  return v1 === createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
};

describe('agentic checkout (ACP 2026-04-17)', () => {
  it('an agent reads the feed, fills a session, completes it with a delegated token: one confirmed order, stock reserved, however it retries', async () => {
    const { tenant } = ctx;
    // The item ids an agent sends are the ids the feed's variants carry.
    const { cup, pot, cupItem, potItem } = await twoFeedItems(ctx.service.baseUrl, tenant);

    const webhookPath = `/hooks/acp/${tenant.tenantId}`;
    ok(await tenant.request('PUT', '/api/v1/ucp/agent-checkout', { webhook_url: hooks.url(webhookPath) }), 200);
    hooks.script.push(503); // the agent platform's first answer: its webhook is briefly unavailable
    const checkout = await acpAgentCheckout(tenant);
    // The agent discovers the checkout from the tenant's UCP profile: the ACP service at this address, its payment handler.
    const profile = await ucpProfile(checkout);
    expect(profile.ucp.services['dev.agenticcommerce']).toEqual([
      expect.objectContaining({ transport: 'rest', endpoint: checkout.base_url }),
    ]);
    expect(profile.ucp.payment_handlers['dev.acp.tokenized.card']).toEqual([expect.objectContaining({ id: payment.handler_id })]);
    const agent = acpAgent(checkout);
    const created = ok(await agent.create({ line_items: [{ id: cupItem }, { id: potItem }], currency: 'eur', capabilities: {} }), 201);
    expect(created).toMatchObject({ status: 'not_ready_for_payment', currency: 'eur' });
    expect(created.line_items.map((line: any) => [line.item.id, line.quantity, line.unit_amount])).toEqual([
      [cup.variantId, 1, 1250],
      [pot.variantId, 1, 3000],
    ]);
    expect(created.messages.map((m: any) => m.param)).toEqual(['$.fulfillment_details.address', '$.selected_fulfillment_options']);
    expect(created.links).toEqual([
      { type: 'terms_of_use', url: SELLER_PAGES.termsOfServiceUrl },
      { type: 'privacy_policy', url: SELLER_PAGES.privacyPolicyUrl },
      { type: 'return_policy', url: SELLER_PAGES.returnPolicyUrl },
    ]);

    // Two cups (an ACP item is one unit), the address, the shipping option.
    const updated = ok(
      await agent.update(created.id, {
        line_items: [{ id: cup.variantId }, { id: cup.variantId }, { id: pot.variantId }],
        fulfillment_details: { name: 'Ada Lovelace', email: 'ada@example.com', address },
        selected_fulfillment_options: [{ type: 'shipping', option_id: 'standard', item_ids: [cup.variantId, pot.variantId] }],
      }),
      200,
    );
    expect(updated).toMatchObject({ status: 'ready_for_payment', messages: [] });
    expect(updated.line_items.map((line: any) => line.quantity)).toEqual([2, 1]);
    expect(updated.totals).toEqual([
      { type: 'items_base_amount', display_text: 'Item(s) total', amount: 5500 },
      { type: 'subtotal', display_text: 'Subtotal', amount: 5500 },
      { type: 'fulfillment', display_text: 'Shipping', amount: 490 },
      { type: 'total', display_text: 'Total', amount: 5990 },
    ]);

    // The same complete three times at once (two with one key), then three times more in turn.
    const key = randomUUID();
    const body = { buyer: { email: 'ada@example.com', first_name: 'Ada' }, payment_data: payment };
    const concurrent = await Promise.all([
      agent.complete(created.id, body, { idempotencyKey: key }),
      agent.complete(created.id, body, { idempotencyKey: key }),
      agent.complete(created.id, body),
    ]);
    const sequential = [];
    for (let i = 0; i < 3; i++) sequential.push(await agent.complete(created.id, body, { idempotencyKey: key }));
    const answers = [...concurrent, ...sequential].map((answer) => ok(answer, 200));
    const orderId = answers[0].order.id;
    for (const answer of answers)
      expect(answer).toMatchObject({ status: 'completed', order: { id: orderId, checkout_session_id: created.id, status: 'confirmed' } });

    expect((await ordersOfSession(tenant, created.id)).map((order) => order.id)).toEqual([orderId]);
    const order = ok(await tenant.request('GET', `/api/v1/oms/orders/${orderId}`), 200);
    expect(order).toMatchObject({
      status: 'confirmed',
      currency: 'EUR',
      subtotal: '55.00',
      shipping_total: '4.90',
      total: '59.90',
      payment_status: 'authorized',
      payment_provider: 'card_tokenized',
      payment_transaction_id: payment.instrument.credential.token,
      sales_channel: 'acp',
    });
    // The order has no place for a buyer or an address; its tag names the session, where the merchant reads them.
    expect((order as { tags: string[] }).tags).toContain(`checkout_session:${created.id}`);
    expect(ok(await tenant.request('GET', `/api/v1/ucp/checkout-sessions/${created.id}`), 200)).toMatchObject({
      buyer: body.buyer,
      fulfillment_details: { name: 'Ada Lovelace', email: 'ada@example.com', address },
      order: { id: orderId },
    });
    expect(answers[0]).toMatchObject({ buyer: body.buyer });
    expect(await stockLevel(tenant, cup)).toMatchObject({ available: 8, reserved: 2 });
    expect(await stockLevel(tenant, pot)).toMatchObject({ available: 2, reserved: 1 });
    expect(ok(await agent.get(created.id), 200)).toMatchObject({ status: 'completed', order: { id: orderId } });
    expect(ok(await agent.cancel(created.id), 405)).toMatchObject({ type: 'invalid_request', code: 'not_cancelable' });

    // The order event reaches the agent platform's webhook, signed, after a retry; its outcome is recorded once.
    const noticesOf = async () =>
      (await readEvents(ctx.service.namespace, checkoutSessionAggregate.events)).filter(
        (event) => event.type === 'CheckoutOrderNoticeRecorded' && event.envelope.aggregateId === created.id,
      );
    const recorded = await eventually(noticesOf, (events) => events.length > 0);
    expect(recorded.map((event) => event.data)).toEqual([{ sessionId: created.id, orderId, delivered: true, attempts: 2, detail: null }]);
    const received = hooks.received.filter((hook) => hook.headers['request-id'] === `${created.id}/order_create`);
    expect(received).toHaveLength(2);
    for (const hook of received) {
      const header = String(hook.headers['merchant-signature']);
      expect(acpWebhookProblems(JSON.parse(hook.body), header)).toEqual([]);
      expect(signedBy(checkout.webhook_secret, header, hook.body)).toBe(true);
      expect(signedBy('acpwh_another_secret', header, hook.body)).toBe(false);
      expect(JSON.parse(hook.body)).toMatchObject({
        type: 'order_create',
        data: {
          type: 'order',
          id: orderId,
          checkout_session_id: created.id,
          status: 'confirmed',
          totals: [{}, {}, { type: 'total', amount: 5990 }],
        },
      });
    }
    expect(await noticesOf()).toHaveLength(1);

    // Its fulfilment moves follow as order_update events, in order, each recorded once.
    for (const status of ['processing', 'shipped'])
      ok(await tenant.request('POST', `/api/v1/oms/orders/${orderId}/status`, { status }), 202);
    const updatesOf = async () =>
      (await readEvents(ctx.service.namespace, checkoutSessionAggregate.events)).filter(
        (event) => event.type === 'CheckoutOrderUpdateNoticeRecorded' && event.envelope.aggregateId === created.id,
      );
    const updates = await eventually(updatesOf, (events) => events.length >= 2);
    expect(updates.map((event) => event.data)).toEqual(
      ['processing', 'shipped'].map((status) => ({ sessionId: created.id, orderId, status, delivered: true, attempts: 1, detail: null })),
    );
    // The units reserved ahead of the order are the order's: shipping it takes them out of stock, as any order's.
    expect(
      await eventually(
        () => stockLevel(tenant, cup),
        (level) => level.reserved === 0,
      ),
    ).toMatchObject({ available: 8, reserved: 0 });
    expect(await stockLevel(tenant, pot)).toMatchObject({ available: 2, reserved: 0 });
    const announced = hooks.received.filter((hook) => String(hook.headers['request-id']).startsWith(`${created.id}/order_update/`));
    expect(announced.map((hook) => JSON.parse(hook.body).data.status)).toEqual(['processing', 'shipped']);
    for (const hook of announced) {
      const header = String(hook.headers['merchant-signature']);
      expect(acpWebhookProblems(JSON.parse(hook.body), header)).toEqual([]);
      expect(signedBy(checkout.webhook_secret, header, hook.body)).toBe(true);
      expect(JSON.parse(hook.body)).toMatchObject({ type: 'order_update', data: { id: orderId, checkout_session_id: created.id } });
    }
  });

  it('out of stock between create and complete: the protocol’s error, no order, nothing reserved', async () => {
    const tenant = await ctx.newTenant();
    await configureFeed(tenant);
    const lamp = await stockedProduct(tenant, 'Desk lamp', '45.00', 1);
    const agent = acpAgent(await acpAgentCheckout(tenant));
    const session = ok(
      await agent.create({
        line_items: [{ id: lamp.variantId }],
        currency: 'EUR',
        capabilities: {},
        fulfillment_details: { name: 'Ada', address },
      }),
      201,
    );
    ok(
      await agent.update(session.id, {
        selected_fulfillment_options: [{ type: 'shipping', option_id: 'standard', item_ids: [lamp.variantId] }],
      }),
      200,
    );
    ok(await tenant.request('PUT', `/api/v1/oms/inventory/levels/${lamp.variantId}/${lamp.locationId}`, { available: 0 }), 200);

    const refused = ok(await agent.complete(session.id, { payment_data: payment }), 400);
    expect(refused).toMatchObject({ type: 'invalid_request', code: 'out_of_stock', param: '$.line_items[0]' });
    expect(await ordersOfSession(tenant, session.id)).toEqual([]);
    expect(await stockLevel(tenant, lamp)).toMatchObject({ available: 0, reserved: 0 });
    const after = ok(await agent.get(session.id), 200);
    expect(after).toMatchObject({
      status: 'not_ready_for_payment',
      line_items: [{ availability_status: 'out_of_stock', available_quantity: 0 }],
    });
    expect(after.messages).toEqual([expect.objectContaining({ type: 'error', code: 'out_of_stock', param: '$.line_items[0]' })]);
  });

  it('agents racing for the last unit: one order; the others the protocol’s error, no order, nothing reserved for them', async () => {
    const tenant = await ctx.newTenant();
    await configureFeed(tenant);
    const lamp = await stockedProduct(tenant, 'Desk lamp', '45.00', 1);
    const agent = acpAgent(await acpAgentCheckout(tenant));
    const ready = async () => {
      const session = ok(
        await agent.create({
          line_items: [{ id: lamp.variantId }],
          currency: 'eur',
          capabilities: {},
          fulfillment_details: { name: 'Ada', address },
        }),
        201,
      );
      const option = [{ type: 'shipping', option_id: 'standard', item_ids: [lamp.variantId] }];
      expect(ok(await agent.update(session.id, { selected_fulfillment_options: option }), 200)).toMatchObject({
        status: 'ready_for_payment',
      });
      return session.id as string;
    };
    // Every session saw the lamp in stock; they complete at once, so the read model shows it to all of them.
    const sessions = [await ready(), await ready(), await ready(), await ready()];
    const answers = await Promise.all(sessions.map((id) => agent.complete(id, { payment_data: payment })));
    const won = answers.filter((answer) => answer.status === 200);
    expect(won, JSON.stringify(answers.map((answer) => answer.body))).toHaveLength(1);
    for (const lost of answers.filter((answer) => answer.status !== 200))
      expect(ok(lost, 400)).toMatchObject({ type: 'invalid_request', code: 'out_of_stock', param: '$.line_items[0]' });

    // One order, confirmed; no rejected order anywhere, in the read model or in the log.
    const page = ok(await tenant.request('GET', '/api/v1/oms/orders?limit=100'), 200) as { data: { id: string; status: string }[] };
    expect(page.data.map((order) => [order.id, order.status])).toEqual([[won[0]?.body.order.id, 'confirmed']]);
    const orderEvents = (await readEvents(ctx.service.namespace, orderAggregate.events)).filter(
      (event) => event.envelope.tenantId === tenant.tenantId,
    );
    expect(orderEvents.filter((event) => event.type === 'OrderPlaced')).toHaveLength(1);
    expect(orderEvents.filter((event) => event.type === 'OrderRejected')).toEqual([]);
    // The winner's unit is reserved, and nothing else.
    expect(await stockLevel(tenant, lamp)).toMatchObject({ available: 0, reserved: 1 });
    for (const [index, id] of sessions.entries())
      if (answers[index]?.status !== 200) expect(ok(await agent.get(id), 200)).toMatchObject({ status: 'not_ready_for_payment' });
  });

  it("another tenant's session is not found, and its key opens nothing here", async () => {
    const owner = await ctx.newTenant();
    await configureFeed(owner);
    const mug = await stockedProduct(owner, 'Mug', '8.00', 5);
    const ownerCheckout = await acpAgentCheckout(owner);
    const session = ok(
      await acpAgent(ownerCheckout).create({ line_items: [{ id: mug.variantId }], currency: 'eur', capabilities: {} }),
      201,
    );

    const other = await ctx.newTenant();
    const otherCheckout = await acpAgentCheckout(other);
    // Each tenant's UCP profile sends agents to its own checkout, signed with its own key.
    const [ownerProfile, otherProfile] = [await ucpProfile(ownerCheckout), await ucpProfile(otherCheckout)];
    expect(otherProfile.ucp.services['dev.agenticcommerce'][0].endpoint).toBe(otherCheckout.base_url);
    expect(JSON.stringify(otherProfile)).not.toContain(owner.tenantId);
    expect(otherProfile.signing_keys[0].kid).not.toBe(ownerProfile.signing_keys[0].kid);
    const otherAgent = acpAgent(otherCheckout);
    expect(ok(await otherAgent.get(session.id), 404)).toMatchObject({ type: 'invalid_request', code: 'not_found' });
    expect(ok(await other.request('GET', `/api/v1/ucp/checkout-sessions/${session.id}`), 404)).toMatchObject({ error: {} });
    expect(ok(await otherAgent.update(session.id, { line_items: [{ id: mug.variantId }] }), 404)).toMatchObject({ code: 'not_found' });
    expect(ok(await otherAgent.complete(session.id, { payment_data: payment }), 404)).toMatchObject({ code: 'not_found' });
    // The owner's items are not for sale at another tenant's checkout either.
    expect(ok(await otherAgent.create({ line_items: [{ id: mug.variantId }], currency: 'eur', capabilities: {} }), 400)).toMatchObject({
      code: 'invalid',
      param: '$.line_items[0].id',
    });
    // The other tenant's key, signed with its own secret, at the owner's address.
    const intruder = acpAgent({ ...otherCheckout, base_url: ownerCheckout.base_url });
    expect(ok(await intruder.get(session.id), 401)).toMatchObject({ code: 'unauthorized' });
    expect(ok(await acpAgent(ownerCheckout).get(session.id), 200)).toMatchObject({ id: session.id, status: 'not_ready_for_payment' });
  });

  it('refuses an unsigned, a forged or a replayed-elsewhere request, and an unsupported API-Version', async () => {
    const tenant = await ctx.newTenant();
    const mug = await stockedProduct(tenant, 'Mug', '8.00', 5);
    const checkout = await acpAgentCheckout(tenant);
    const agent = acpAgent(checkout);
    const body = { line_items: [{ id: mug.variantId }], currency: 'eur', capabilities: {} };
    const key = randomUUID();
    expect(ok(await agent.create(body, { unsigned: true, idempotencyKey: key }), 401)).toMatchObject({ code: 'invalid_signature' });
    expect(ok(await agent.create(body, { secret: 'acpsig_forged', idempotencyKey: key }), 401)).toMatchObject({
      code: 'invalid_signature',
    });
    const stale = { timestamp: new Date(Date.now() - 10 * 60_000).toISOString() };
    expect(ok(await agent.create(body, { headers: stale, idempotencyKey: key }), 401)).toMatchObject({ code: 'invalid_signature' });
    expect(ok(await agent.create(body, { headers: { 'api-version': '2025-09-29' }, idempotencyKey: key }), 400)).toMatchObject({
      code: 'unsupported_api_version',
    });
    expect(ok(await agent.create(body, { headers: { authorization: 'Bearer acp_wrong' }, idempotencyKey: key }), 401)).toMatchObject({
      code: 'unauthorized',
    });
    // None of those created anything: the first signed request with that key is the one that creates the session.
    const created = ok(await agent.create(body, { idempotencyKey: key }), 201);
    expect(created.line_items).toHaveLength(1);
    const replay = ok(await agent.create(body, { idempotencyKey: key }), 201);
    expect(replay.id).toBe(created.id);
    expect(ok(await agent.create({ ...body, locale: 'fr-FR' }, { idempotencyKey: key }), 422)).toMatchObject({
      code: 'idempotency_conflict',
    });
    expect(ok(await agent.cancel(created.id), 200)).toMatchObject({ status: 'canceled' });
  });
});
