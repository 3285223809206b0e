import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { completionOrderKey, completionRequestHash, withdrawOrder } from '../../commands/acp/checkout-completion.ts';
import { checkoutSessionAggregate, type StartCheckoutCompletion } from '../../commands/acp/checkout-session.ts';
import { inventoryAggregate } from '../../commands/oms/inventory.ts';
import { orderAggregate, orderIdOf } from '../../commands/oms/order.ts';
import { hashOf } from '../../http/checkout-operations.ts';
import { keyedProducer, quietKafka } from '../../ledger/kafka.ts';
import type { IdempotentRequest } from '../../ledger/message.ts';
import { SYSTEM_ACTOR } from '../../ledger/send-command.ts';
import { namespaced, type TopicSpec } from '../../ledger/topics.ts';
import { acpAgent, acpAgentCheckout } from '../support/acp-agent.ts';
import { ok, ordersOfSession, twoFeedItems } from '../support/agentic-catalog.ts';
import type { Tenant } from '../support/client.ts';
import { readEvents } from '../support/event-log.ts';
import { eventually, stockLevel } from '../support/orders.ts';
import { placeOrderCommand } from '../support/place-order-command.ts';
import { useServiceAndTenant, type ServiceAndTenant } from '../support/service-and-tenant.ts';

/**
 * A completion interrupted after its stock was reserved ahead and before its order was placed, produced for real: the
 * session's StartCheckoutCompletion written straight to its command topic, as the edge writes it, and nothing after it
 * (the edge's process gone). The completion sweeper ends it within CHECKOUT_COMPLETION_TIMEOUT_SECONDS.
 */
const BOUND_SECONDS = 3;
const storageDir = mkdtempSync(path.join(tmpdir(), 'sweeper-store-'));
const serviceWithBound = (seconds: number) =>
  useServiceAndTenant({
    env: {
      STORAGE_DIR: storageDir,
      FEED_QUIET_MS: '200',
      FEED_MAX_DELAY_MS: '1000',
      CHECKOUT_COMPLETION_TIMEOUT_SECONDS: String(seconds),
    },
  });
/** The service of the running describe. */
let current: ServiceAndTenant | undefined;
const ctx = (): ServiceAndTenant => {
  if (!current) throw new Error('no service');
  return current;
};
const stack = inject('stack');

const address = { name: 'Ada Lovelace', line_one: '1 Rue de la Paix', city: 'Paris', state: 'IDF', country: 'FR', postal_code: '75002' };
const payment = { handler_id: 'card_tokenized', instrument: { type: 'card', credential: { type: 'spt', token: `spt_${randomUUID()}` } } };

type Shop = Awaited<ReturnType<typeof twoFeedItems>>;

/** A ready session for two cups and a pot, through the agent's own requests. */
async function readySession(tenant: Tenant, shop: Shop) {
  const agent = acpAgent(await acpAgentCheckout(tenant));
  const { cup, pot } = shop;
  const created = ok(
    await agent.create({
      line_items: [{ id: cup.variantId }, { id: cup.variantId }, { id: pot.variantId }],
      currency: 'eur',
      capabilities: {},
    }),
    201,
  );
  const ready = ok(
    await agent.update(created.id, {
      fulfillment_details: { name: 'Ada Lovelace', email: 'ada@example.com', address },
      selected_fulfillment_options: [{ type: 'shipping', option_id: 'standard', item_ids: [cup.variantId, pot.variantId] }],
    }),
    200,
  );
  expect(ready.status).toBe('ready_for_payment');
  return { agent, sessionId: created.id as string };
}

/** Writes a command straight to its aggregate's command topic, keyed by the aggregate, as the edge's bus does (no reply). */
async function writeCommand(
  tenant: Tenant,
  topic: TopicSpec,
  aggregateId: string,
  input: { type: string; data: object },
  idempotency?: IdempotentRequest,
) {
  const metadata = {
    ...(idempotency ? { idempotency } : {}),
    commandId: randomUUID(),
    tenantId: tenant.tenantId,
    orgId: tenant.orgId,
    actor: SYSTEM_ACTOR,
    issuedAt: Date.now(),
    correlationId: randomUUID(),
    noReply: true,
  };
  const command = { ...input, metadata };
  const producer = keyedProducer(quietKafka(stack.kafkaBrokers, 'sweeper-test'));
  try {
    await producer.send({
      topic: namespaced(ctx().service.namespace, topic.name),
      messages: [{ key: aggregateId, value: JSON.stringify(command), headers: { 'command-type': command.type } }],
    });
  } finally {
    await producer.disconnect();
  }
}

const reservationOf = (shop: Shop) => [
  { lineIndex: 0, variantId: shop.cup.variantId, locationId: shop.cup.locationId, quantity: 2 },
  { lineIndex: 1, variantId: shop.pot.variantId, locationId: shop.pot.locationId, quantity: 1 },
];

/**
 * What the edge's complete writes first, and only that: the session's completion started, with its stock to reserve;
 * with `key`, as the edge remembers an agent's Idempotency-Key on the session (the request hash of `complete(body)`).
 */
async function startCompletionOnly(tenant: Tenant, shop: Shop, sessionId: string, key?: { key: string; body: object }): Promise<string> {
  const orderId = orderIdOf(tenant.tenantId, tenant.orgId, completionOrderKey(sessionId, 0));
  const start: Pick<StartCheckoutCompletion, 'type' | 'data'> = {
    type: 'StartCheckoutCompletion',
    data: { sessionId, orderId, attempt: 0, buyer: null, reservation: reservationOf(shop) },
  };
  const params = { tenant_id: tenant.tenantId, org_id: tenant.orgId, checkout_session_id: sessionId };
  const idempotency = key && {
    key: `complete:${key.key}`,
    requestHash: hashOf({ operation: 'complete', params, body: key.body }),
  };
  await writeCommand(tenant, checkoutSessionAggregate.commands, sessionId, start, idempotency);
  return orderId;
}

/** The edge's next step: the attempt's order placed on the stock held for it (same key, same request hash). */
async function placeOrderOnly(tenant: Tenant, shop: Shop, sessionId: string, orderId: string): Promise<void> {
  const orderKey = completionOrderKey(sessionId, 0);
  const line = (name: string, unitPrice: string, held: ReturnType<typeof reservationOf>[number]) => ({
    name,
    quantity: held.quantity,
    unitPrice,
    variantId: held.variantId,
    locationId: held.locationId,
    sku: null,
    variantLabel: null,
    requiresShipment: true,
  });
  const [cups, pots] = reservationOf(shop) as [ReturnType<typeof reservationOf>[number], ReturnType<typeof reservationOf>[number]];
  const place = placeOrderCommand({
    orderId,
    idempotencyKey: orderKey,
    requestHash: completionRequestHash(orderKey),
    currency: 'EUR',
    salesChannel: 'acp',
    platform: 'acp',
    paymentProvider: payment.handler_id,
    paymentTransactionId: payment.instrument.credential.token,
    tags: [`checkout_session:${sessionId}`],
    shippingTotal: '0',
    lines: [line('Espresso cup', '12.50', cups), line('Moka pot', '30.00', pots)],
    reservedAhead: true,
  });
  await writeCommand(tenant, orderAggregate.commands, orderId, place);
}

/** The events about the order id: its placement or withdrawal, and the stock reserved ahead, released, for it. */
async function eventsAbout(orderId: string) {
  const about = (events: Awaited<ReturnType<typeof readEvents>>) =>
    events.filter((event) => (event.data as { orderId?: string }).orderId === orderId).map((event) => event.type);
  return {
    order: about(await readEvents(ctx().service.namespace, orderAggregate.events)),
    inventory: about(await readEvents(ctx().service.namespace, inventoryAggregate.events)),
    session: about(await readEvents(ctx().service.namespace, checkoutSessionAggregate.events)),
  };
}

const count = (types: string[], type: string) => types.filter((t) => t === type).length;

/** The shop's stock: as stocked (10 cups, 3 pots), or with the session's order (2 cups, 1 pot) reserved once. */
async function expectStock(tenant: Tenant, shop: Shop, as: 'untouched' | 'reserved once'): Promise<void> {
  const reserved = as === 'reserved once';
  expect(await stockLevel(tenant, shop.cup)).toMatchObject(reserved ? { available: 8, reserved: 2 } : { available: 10, reserved: 0 });
  expect(await stockLevel(tenant, shop.pot)).toMatchObject(reserved ? { available: 2, reserved: 1 } : { available: 3, reserved: 0 });
}

/** A tenant's shop, a session ready for payment and its completion started (stock reserved ahead), nothing after. */
async function interruptedCompletion(tenant: Tenant) {
  const shop = await twoFeedItems(ctx().service.baseUrl, tenant);
  const { agent, sessionId } = await readySession(tenant, shop);
  const orderId = await startCompletionOnly(tenant, shop, sessionId);
  return { shop, agent, sessionId, orderId };
}

describe('an agentic checkout completion interrupted between its reservation and its order', () => {
  const service = serviceWithBound(BOUND_SECONDS);
  beforeAll(() => {
    current = service;
  });
  it('is given up within the bound: the session failed, the stock released once, another tenant untouched; the agent completes again with one order', async () => {
    const { tenant } = ctx();
    const shop = await twoFeedItems(ctx().service.baseUrl, tenant);
    // Another tenant: a ready session of its own and its stock, which nothing here may touch.
    const other = await ctx().newTenant();
    const otherShop = await twoFeedItems(ctx().service.baseUrl, other);
    const otherSession = await readySession(other, otherShop);

    const { agent, sessionId } = await readySession(tenant, shop);
    const started = Date.now();
    // The agent's complete, under its key, got as far as this before the service died.
    const interrupted = { key: randomUUID(), body: { payment_data: payment } };
    const orderId = await startCompletionOnly(tenant, shop, sessionId, interrupted);
    // Decided with no reply to wait for: the session shows it once its read model has it, and the stock held ahead.
    const inProgress = await eventually(
      async () => ok(await agent.get(sessionId), 200),
      (session) => session.status === 'complete_in_progress',
      5_000,
    );
    expect(inProgress.status).toBe('complete_in_progress');

    // Reserved ahead, then, with no order placed, given up: the session reopens, its attempt failed.
    const failed = await eventually(
      async () => ok(await agent.get(sessionId), 200),
      (session) => session.status !== 'complete_in_progress',
      (BOUND_SECONDS + 20) * 1_000,
    );
    const elapsed = Date.now() - started;
    expect(failed.status).toBe('ready_for_payment');
    expect(elapsed).toBeGreaterThanOrEqual(BOUND_SECONDS * 1_000);
    expect(elapsed).toBeLessThan((BOUND_SECONDS + 15) * 1_000);
    const log = await eventually(
      () => eventsAbout(orderId),
      (events) => events.inventory.includes('StockReleased'),
    );
    expect(log).toEqual({
      order: ['OrderWithdrawn'],
      inventory: ['StockReserved', 'StockReleased'],
      session: ['CheckoutCompletionStarted', 'CheckoutCompletionFailed'],
    });
    await expectStock(tenant, shop, 'untouched');
    expect(await ordersOfSession(tenant, sessionId)).toEqual([]);
    const merchantView = ok(await tenant.request('GET', `/api/v1/ucp/checkout-sessions/${sessionId}`), 200);
    expect(merchantView.status).toBe('ready_for_payment');

    // The agent retries that complete with its key: that completion failed, and says so.
    const retried = ok(await agent.complete(sessionId, interrupted.body, { idempotencyKey: interrupted.key }), 400);
    expect(retried).toMatchObject({ code: 'processing_error', message: 'the order could not be placed' });
    expect(await ordersOfSession(tenant, sessionId)).toEqual([]);

    // The agent completes again: a new attempt, its own order on stock reserved once; retried, the same answer.
    const key = randomUUID();
    const body = { payment_data: payment };
    const completed = ok(await agent.complete(sessionId, body, { idempotencyKey: key }), 200);
    expect(completed).toMatchObject({ status: 'completed', order: { status: 'confirmed' } });
    expect(completed.order.id).not.toBe(orderId);
    expect(ok(await agent.complete(sessionId, body, { idempotencyKey: key }), 200)).toMatchObject({ order: { id: completed.order.id } });
    expect((await ordersOfSession(tenant, sessionId)).map((order) => order.id)).toEqual([completed.order.id]);
    await expectStock(tenant, shop, 'reserved once');
    // The withdrawn order stays withdrawn: nothing more about it in the log.
    expect(await eventsAbout(orderId)).toEqual(log);

    // The other tenant's session and stock are as they were.
    expect(ok(await otherSession.agent.get(otherSession.sessionId), 200).status).toBe('ready_for_payment');
    await expectStock(other, otherShop, 'untouched');
  });

  it('raced by agent retries around the bound, ends in one outcome: one order on stock reserved once, or none and the stock back', async () => {
    const tenant = await ctx().newTenant();
    const { shop, agent, sessionId, orderId } = await interruptedCompletion(tenant);
    // Retries as the bound passes, while the sweeper polls: either may take the steps first (the outcome is not
    // controlled here; the tests around this one take each way deterministically), and they must agree.
    await sleep(BOUND_SECONDS * 1_000);
    const key = randomUUID();
    const body = { payment_data: payment };
    const answers = await Promise.all(
      [0, 150, 300, 450, 600].map(async (delay) => {
        await sleep(delay);
        return agent.complete(sessionId, body, { idempotencyKey: key });
      }),
    );
    const session = await eventually(
      async () => ok(await agent.get(sessionId), 200),
      (s) => s.status !== 'complete_in_progress',
      (BOUND_SECONDS + 20) * 1_000,
    );
    const completedWith = new Set(answers.filter((a) => a.status === 200).map((a) => a.body.order.id as string));
    for (const answer of answers) expect([200, 400], JSON.stringify(answer.body)).toContain(answer.status);
    expect(completedWith.size).toBeLessThanOrEqual(1);
    const log = await eventually(
      () => eventsAbout(orderId),
      (events) => events.order.length > 0,
    );
    // The attempt's order was placed or withdrawn, never both, and its stock released only if withdrawn.
    expect(count(log.order, 'OrderPlaced') + count(log.order, 'OrderWithdrawn')).toBe(1);
    expect(count(log.inventory, 'StockReserved')).toBe(1);
    expect(count(log.inventory, 'StockReleased')).toBe(count(log.order, 'OrderWithdrawn'));
    const orders = (await ordersOfSession(tenant, sessionId)).map((order) => order.id);
    if (session.status === 'completed') {
      expect(orders).toEqual([session.order.id]);
      expect([...completedWith]).toEqual([session.order.id]);
      await expectStock(tenant, shop, 'reserved once');
    } else {
      expect(orders).toEqual([]);
      expect(completedWith.size).toBe(0);
      await expectStock(tenant, shop, 'untouched');
    }
  });

  it('with its order placed and the session never completed, is completed with that order within the bound', async () => {
    const tenant = await ctx().newTenant();
    const { shop, agent, sessionId, orderId } = await interruptedCompletion(tenant);
    await eventually(
      () => stockLevel(tenant, shop.cup),
      (level) => level.reserved === 2,
      5_000,
    );
    await placeOrderOnly(tenant, shop, sessionId, orderId);
    const completed = await eventually(
      async () => ok(await agent.get(sessionId), 200),
      (session) => session.status !== 'complete_in_progress',
      (BOUND_SECONDS + 20) * 1_000,
    );
    expect(completed).toMatchObject({ status: 'completed', order: { id: orderId } });
    expect((await ordersOfSession(tenant, sessionId)).map((order) => [order.id, order.status])).toEqual([[orderId, 'confirmed']]);
    await expectStock(tenant, shop, 'reserved once');
    const log = await eventsAbout(orderId);
    expect(log.order).toEqual(['OrderPlaced', 'OrderConfirmed']);
    expect(log.inventory).toEqual(['StockReserved']);
    // The agent's retry reaches the same order.
    const again = ok(await agent.complete(sessionId, { payment_data: payment }), 200);
    expect(again).toMatchObject({ status: 'completed', order: { id: orderId, status: 'confirmed' } });
  });
});

describe('an agent retry after its attempt was withdrawn and before the session says so', () => {
  // Long enough that the sweeper stays out of it: this is the edge meeting a withdrawal another instance made.
  const service = serviceWithBound(600);
  beforeAll(() => {
    current = service;
  });

  it('places no order on the released stock: the attempt fails, and the next complete orders on stock reserved once', async () => {
    const tenant = ctx().tenant;
    const { shop, agent, sessionId, orderId } = await interruptedCompletion(tenant);
    await eventually(
      () => stockLevel(tenant, shop.cup),
      (level) => level.reserved === 2,
      10_000,
    );
    // A sweeper's first step, its second (failing the session) not taken: the order id withdrawn, the stock released.
    // The agent's retry follows at once: its PlaceOrder comes after the withdrawal on the order's own partition.
    await writeCommand(tenant, orderAggregate.commands, orderId, withdrawOrder(orderId, JSON.stringify(reservationOf(shop))));
    const refused = ok(await agent.complete(sessionId, { payment_data: payment }), 400);
    expect(refused).toMatchObject({ code: 'processing_error', message: 'the order could not be placed' });
    expect(ok(await agent.get(sessionId), 200).status).toBe('ready_for_payment');
    const log = await eventsAbout(orderId);
    expect(log.order).toEqual(['OrderWithdrawn']);
    expect(log.inventory).toEqual(['StockReserved', 'StockReleased']);
    expect(await ordersOfSession(tenant, sessionId)).toEqual([]);
    expect(await stockLevel(tenant, shop.cup)).toMatchObject({ available: 10, reserved: 0 });

    const completed = ok(await agent.complete(sessionId, { payment_data: payment }), 200);
    expect(completed).toMatchObject({ status: 'completed', order: { status: 'confirmed' } });
    expect((await ordersOfSession(tenant, sessionId)).map((order) => order.id)).toEqual([completed.order.id]);
    await expectStock(tenant, shop, 'reserved once');
  });
});
