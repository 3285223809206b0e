import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutSessionAggregate } from '../../commands/acp/checkout-session.ts';
import { acpAgentCheckout } from '../support/acp-agent.ts';
import { configureFeed, ok, stockedProduct, ucpProfile } from '../support/agentic-catalog.ts';
import { readEvents } from '../support/event-log.ts';
import { startHookReceiver, type ReceivedHook } from '../support/notice-receivers.ts';
import { eventually, orderRequest } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';
import { ucpOrderProblems, ucpOrderWebhookHeaderProblems } from '../support/ucp-checkout-schema.ts';
import { ucpPlatform } from '../support/ucp-platform.ts';
import { ucpRequestSignatureProblems, ucpResponseSignatureProblems } from '../support/ucp-signatures.ts';
import type { Tenant } from '../support/client.ts';
import { ucpBuyer as buyer, ucpDestination as destination } from '../support/ucp-buyer.ts';

/**
 * UCP's order capability (2026-04-08): a platform completes a UCP checkout session, and the business posts the order,
 * then each status it moves to, to the platform's order webhook. The test is that platform: its receiver takes the
 * business's profile from `UCP-Agent`, verifies the RFC 9421 signature with the key of that `kid` (its own verifier,
 * test/support/ucp-signatures.ts), and checks headers and body against UCP's OpenAPI and `order.json`; then it reads
 * the order as it stands (Get Order).
 */
const storageDir = mkdtempSync(path.join(tmpdir(), 'ucp-order-store-'));
const ctx = useServiceAndTenant({
  env: { STORAGE_DIR: storageDir, FEED_QUIET_MS: '200', FEED_MAX_DELAY_MS: '1000', NOTICE_ALLOW_PRIVATE_NETWORKS: 'true' },
});

let hooks: Awaited<ReturnType<typeof startHookReceiver>>;
beforeAll(async () => {
  hooks = await startHookReceiver();
});
afterAll(() => hooks.close());

/** The tenant's UCP platform, whose order webhook (and agent webhook, for ACP's sessions) is the receiver's. */
async function platformOf(tenant: Tenant) {
  const paths = { ucp: `/hooks/ucp/${tenant.tenantId}`, acp: `/hooks/acp/${tenant.tenantId}` };
  const settings = { webhook_url: hooks.url(paths.acp), ucp_order_webhook_url: hooks.url(paths.ucp) };
  expect(ok(await tenant.request('PUT', '/api/v1/ucp/agent-checkout', settings), 200)).toMatchObject(settings);
  const checkout = await acpAgentCheckout(tenant);
  const profile = await ucpProfile(checkout);
  expect(profile.ucp.capabilities['dev.ucp.shopping.order']).toEqual([
    {
      version: '2026-04-08',
      spec: 'https://ucp.dev/2026-04-08/specification/order',
      schema: 'https://ucp.dev/2026-04-08/schemas/shopping/order.json',
    },
  ]);
  const [service] = profile.ucp.services['dev.ucp.shopping'] as { endpoint: string }[];
  return { checkout, paths, platform: ucpPlatform(service?.endpoint ?? '', checkout.api_key) };
}

/** What the platform finds wrong with a delivery: its headers, the signature by the profile UCP-Agent names, the body. */
async function deliveryProblems(hook: ReceivedHook): Promise<string[]> {
  const profileUrl = /^profile="([^"]+)"$/.exec(String(hook.headers['ucp-agent']))?.[1];
  if (!profileUrl) return ['UCP-Agent names no profile'];
  const profile = (await (await fetch(profileUrl)).json()) as { signing_keys: Record<string, string>[] };
  const request = { method: hook.method, url: `http://${String(hook.headers.host)}${hook.path}`, headers: hook.headers, raw: hook.body };
  return [
    ...ucpOrderWebhookHeaderProblems(hook.headers),
    ...ucpRequestSignatureProblems(request, profile.signing_keys),
    ...ucpOrderProblems(JSON.parse(hook.body)),
  ];
}

const recordedOf = async (type: string, sessionId: string) =>
  (await readEvents(ctx.service.namespace, checkoutSessionAggregate.events)).filter(
    (event) => event.type === type && event.envelope.aggregateId === sessionId,
  );

describe('UCP order webhooks (2026-04-08)', () => {
  it('a completed UCP session: the order, then each status, posted signed to the platform’s webhook, retried, recorded once; Get Order reads it', async () => {
    const { tenant } = ctx;
    await configureFeed(tenant);
    const lamp = await stockedProduct(tenant, 'Desk lamp', '45.00', 3);
    const { checkout, paths, platform } = await platformOf(tenant);
    // Another tenant with its own platform webhook, on the same receiver: it must hear nothing of this order.
    const other = await ctx.newTenant();
    const theirs = await platformOf(other);

    const fulfillment = {
      methods: [{ type: 'shipping', destinations: [destination], groups: [{ selected_option_id: 'standard' }] }],
    };
    const session = ok(await platform.create({ line_items: [{ item: { id: lamp.variantId }, quantity: 2 }], buyer, fulfillment }), 201);
    expect(session.status).toBe('ready_for_complete');
    hooks.script.push(503); // the platform's first answer: its webhook is briefly unavailable
    const instruments = [
      { id: 'i1', handler_id: 'card_tokenized', type: 'card', selected: true, credential: { type: 'token', token: 'tok_1' } },
    ];
    const completed = ok(await platform.complete(session.id, { payment: { instruments } }), 200);
    expect(completed.status).toBe('completed');
    const orderId = completed.order.id as string;

    // Delivered on the second attempt, recorded once.
    const notices = await eventually(
      () => recordedOf('CheckoutOrderNoticeRecorded', session.id),
      (events) => events.length > 0,
    );
    expect(notices.map((event) => event.data)).toEqual([{ sessionId: session.id, orderId, delivered: true, attempts: 2, detail: null }]);
    const created = hooks.received.filter((hook) => hook.path === paths.ucp);
    expect(created).toHaveLength(2);
    expect(new Set(created.map((hook) => hook.headers['webhook-id'])).size).toBe(1);
    expect(created[1]?.body).toBe(created[0]?.body);
    for (const hook of created) {
      expect(hook.method).toBe('POST');
      expect(hook.headers['ucp-agent']).toBe(`profile="${checkout.ucp_profile_url}"`);
      expect(await deliveryProblems(hook)).toEqual([]);
    }
    expect(JSON.parse(created[0]?.body ?? '{}')).toMatchObject({
      ucp: { version: '2026-04-08', capabilities: { 'dev.ucp.shopping.order': [{ version: '2026-04-08' }] } },
      id: orderId,
      checkout_id: session.id,
      currency: 'EUR',
      line_items: [{ item: { id: lamp.variantId, price: 4500 }, quantity: { original: 2, total: 2, fulfilled: 0 }, status: 'processing' }],
      fulfillment: { expectations: [{ method_type: 'shipping', destination: { postal_code: '75002' } }], events: [] },
      totals: [{ type: 'subtotal', amount: 9000 }, { type: 'fulfillment' }, { type: 'total' }],
    });

    // The order's moves follow, each the whole order as it then stood, each recorded once.
    for (const status of ['processing', 'shipped'])
      ok(await tenant.request('POST', `/api/v1/oms/orders/${orderId}/status`, { status }), 202);
    const updates = await eventually(
      () => recordedOf('CheckoutOrderUpdateNoticeRecorded', session.id),
      (events) => events.length >= 2,
    );
    expect(updates.map((event) => event.data)).toEqual(
      ['processing', 'shipped'].map((status) => ({ sessionId: session.id, orderId, status, delivered: true, attempts: 1, detail: null })),
    );
    const announced = hooks.received.filter((hook) => hook.path === paths.ucp).slice(2);
    expect(announced).toHaveLength(2);
    for (const hook of announced) expect(await deliveryProblems(hook)).toEqual([]);
    const [processing, shipped] = announced.map((hook) => JSON.parse(hook.body));
    expect(processing.fulfillment.events.map((event: { type: string }) => event.type)).toEqual(['processing']);
    expect(shipped.fulfillment.events.map((event: { type: string }) => event.type)).toEqual(['processing', 'shipped']);
    expect(shipped.line_items[0]).toMatchObject({ quantity: { total: 2, fulfilled: 2 }, status: 'fulfilled' });
    expect(new Set([...created, ...announced].map((hook) => hook.headers['webhook-id'])).size).toBe(3);

    // The platform reads the order as it stands (Get Order): the last event's order, signed as every UCP answer is.
    const read = await platform.getOrder(orderId);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(shipped);
    expect(ucpResponseSignatureProblems(read, (await ucpProfile(checkout)).signing_keys)).toEqual([]);
    // Not found: an unknown order, this one with another tenant's key, an order of ours not placed through UCP.
    const handEntered = ok(await tenant.request('POST', '/api/v1/oms/orders', orderRequest()), 201) as { id: string };
    const notFound = {
      ucp: { status: 'error', capabilities: { 'dev.ucp.shopping.order': [{ version: '2026-04-08' }] } },
      messages: [{ type: 'error', code: 'not_found', severity: 'unrecoverable' }],
    };
    for (const answer of [
      await platform.getOrder(randomUUID()),
      await theirs.platform.getOrder(orderId),
      await platform.getOrder(handEntered.id),
      await platform.getOrder('not-an-id'),
    ])
      expect(ok(answer, 200)).toMatchObject(notFound);

    // Only the UCP platform heard: not the agent webhook (ACP), not the other tenant's platform.
    expect(hooks.received.filter((hook) => hook.path === paths.acp)).toEqual([]);
    expect(hooks.received.filter((hook) => hook.path === theirs.paths.ucp || hook.path === theirs.paths.acp)).toEqual([]);
    expect(await recordedOf('CheckoutOrderNoticeRecorded', session.id)).toHaveLength(1);
  });

  it('a signature does not verify with another tenant’s key, nor over another body', async () => {
    const tenant = await ctx.newTenant();
    await configureFeed(tenant);
    const lamp = await stockedProduct(tenant, 'Desk lamp', '45.00', 1);
    const { checkout, paths, platform } = await platformOf(tenant);
    const ourKeys = (await ucpProfile(checkout)).signing_keys as Record<string, string>[];
    const other = await acpAgentCheckout(await ctx.newTenant());
    const theirKeys = (await ucpProfile(other)).signing_keys as Record<string, string>[];
    const fulfillment = { methods: [{ type: 'shipping', destinations: [destination], groups: [{ selected_option_id: 'standard' }] }] };
    const session = ok(await platform.create({ line_items: [{ item: { id: lamp.variantId }, quantity: 1 }], buyer, fulfillment }), 201);
    const credential = { type: 'token', token: `tok_${randomUUID()}` };
    const instruments = [{ id: 'i1', handler_id: 'card_tokenized', type: 'card', selected: true, credential }];
    ok(await platform.complete(session.id, { payment: { instruments } }), 200);
    const [hook] = await eventually(
      async () => hooks.received.filter((received) => received.path === paths.ucp),
      (received) => received.length > 0,
    );
    if (!hook) throw new Error('no delivery');
    expect(await deliveryProblems(hook)).toEqual([]);
    const request = { method: hook.method, url: `http://${String(hook.headers.host)}${hook.path}`, headers: hook.headers, raw: hook.body };
    const mine = /keyid="([^"]+)"/.exec(String(hook.headers['signature-input']))?.[1];
    expect(
      ucpRequestSignatureProblems(
        request,
        theirKeys.map((key) => ({ ...key, kid: mine })),
      ),
    ).toEqual(['signature_invalid']);
    const tampered = { ...request, raw: hook.body.replace('"quantity":{"original":1', '"quantity":{"original":9') };
    expect(ucpRequestSignatureProblems(tampered, ourKeys)).toEqual(['digest_mismatch: Content-Digest is not the body’s']);
  });
});
