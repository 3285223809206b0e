// Issue 8: the broker goes away while two tenants keep writing, and comes back. The service must answer 503
// quickly while it is gone and heal by itself, in the same process, losing and duplicating nothing.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newTenant, type Tenant } from '../support/client.ts';
import { orderRequest, stocked } from '../support/orders.ts';
import { startPrivateKafka, type PrivateKafka } from '../support/private-kafka.ts';
import {
  OutageTimeline,
  eventually,
  firstOf,
  isAcknowledged,
  isUnavailable,
  probeHealth,
  repeated,
  sendSteadily,
  tally,
  timedRequest,
  validRetryAfter,
  type Answer,
} from '../support/private-outage.ts';
import {
  expectAlwaysLive,
  expectAnsweredWithin,
  expectReadinessThrough,
  readyAgain as readyAgainOf,
} from '../support/outage-assertions.ts';
import { startServiceProcess, uniqueName, type Service } from '../support/service-process.ts';

const WARM_UP_MS = 4_000;
const OUTAGE_MS = 15_000;
/** Per tenant and kind (product, order): four writes a second in all. */
const WRITE_EVERY_MS = 1_000;
const MAX_WRITES_PER_STREAM = 75;
/** Past the service's COMMAND_TIMEOUT_MS (15 s): a write still unanswered then has hung. */
const CLIENT_DEADLINE_MS = 17_000;
const FAST_503_MS = 5_000;
/** Readiness may come from a periodic check; give it this long to notice before holding it to 503. */
const READINESS_NOTICE_MS = 3_000;
const HEAL_WITHIN_MS = 30_000;
const READY_BEFORE_MS = 60_000;
const KEEP_WRITING_AFTER_HEAL_MS = 3_000;
const INITIAL_STOCK = 1_000;

type Shop = { label: string; tenant: Tenant; stock: { variantId: string; locationId: string } };
type Write = Answer & { shop: Shop; kind: 'product' | 'order'; title?: string; idempotencyKey?: string; quantity?: number };

let broker: PrivateKafka | undefined;
let service: Service | undefined;
const shops: Shop[] = [];
const writes: Write[] = [];
const timeline = new OutageTimeline();
let health: ReturnType<typeof probeHealth>;

const readAs = (shop: Shop, path: string): Promise<Answer> =>
  timedRequest(service!.baseUrl, {
    what: `tenant ${shop.label}: GET ${path}`,
    method: 'GET',
    path,
    headers: shop.tenant.headers,
    deadlineMs: 10_000,
  });

const writeProduct = async (shop: Shop, i: number): Promise<Write> => {
  const title = `${shop.label} product ${i}`;
  const answer = await timedRequest(service!.baseUrl, {
    what: `tenant ${shop.label}: POST product "${title}"`,
    method: 'POST',
    path: '/api/v1/pim/products',
    body: { title },
    headers: shop.tenant.headers,
    deadlineMs: CLIENT_DEADLINE_MS,
  });
  const write: Write = { ...answer, shop, kind: 'product', title };
  writes.push(write);
  return write;
};

const writeOrder = async (shop: Shop, i: number): Promise<Write> => {
  const quantity = 1 + (i % 3);
  const line = { name: 'Cup', quantity, unit_price: '2.50', variant_id: shop.stock.variantId, location_id: shop.stock.locationId };
  const request = orderRequest({ line_items: [line] });
  const answer = await timedRequest(service!.baseUrl, {
    what: `tenant ${shop.label}: POST order ${request.idempotency_key} (${quantity} units)`,
    method: 'POST',
    path: '/api/v1/oms/orders',
    body: request,
    headers: shop.tenant.headers,
    deadlineMs: CLIENT_DEADLINE_MS,
  });
  const write: Write = { ...answer, shop, kind: 'order', idempotencyKey: request.idempotency_key, quantity };
  writes.push(write);
  return write;
};

/** When the first write of `kind` sent after the broker's return was acknowledged. */
const healedAt = (kind: Write['kind']): number =>
  Math.min(...writes.filter((w) => w.kind === kind && timeline.after(w) && isAcknowledged(w)).map((w) => w.answeredAt));

const enoughWrites = (): boolean => {
  const healed = Math.max(healedAt('product'), healedAt('order'));
  return Date.now() > timeline.back + HEAL_WITHIN_MS || Date.now() > healed + KEEP_WRITING_AFTER_HEAL_MS;
};

const readyAgain = (): Answer | undefined => readyAgainOf(health, timeline);

beforeAll(async () => {
  broker = await startPrivateKafka('broker-outage');
  service = await startServiceProcess({ ...inject('stack'), kafkaBrokers: broker.brokers }, { namespace: uniqueName('broker-outage') });
  console.log(`service log: .stack/logs/test-services/${service.namespace}.log; broker: ${broker.dir}`);
  for (const label of ['A', 'B']) {
    const tenant = await newTenant(service.baseUrl);
    shops.push({ label, tenant, stock: await stocked(tenant, INITIAL_STOCK) });
  }
  // The outage starts from a ready service. On a broker this fresh a part can still be restarting (its coordinator was
  // loading when it first joined), and the readiness assertion holds the last probe before the stop to 200.
  const readyUrl = `${service.baseUrl}/health/ready`;
  const readyFirst = await eventually(
    () =>
      fetch(readyUrl).then(
        (r) => r.status,
        () => 0,
      ),
    (status) => status === 200,
    READY_BEFORE_MS,
  );
  console.log(`ready before the outage: ${readyFirst}`);

  let scenarioOver = false; // also when it throws: stop sending
  health = probeHealth(service.baseUrl, { everyMs: 500, enough: () => scenarioOver });
  const streams = shops.flatMap((shop, s) =>
    [writeProduct, writeOrder].map(async (write, k) => {
      await sleep((2 * s + k) * (WRITE_EVERY_MS / 4)); // spread the four streams over the second
      return sendSteadily((i) => write(shop, i), {
        everyMs: WRITE_EVERY_MS,
        max: MAX_WRITES_PER_STREAM,
        enough: () => scenarioOver || enoughWrites(),
      });
    }),
  );
  try {
    await sleep(WARM_UP_MS);
    await timeline.outage(broker, OUTAGE_MS);
    await Promise.all(streams);
    await eventually(
      async () => readyAgain(),
      (found) => found !== undefined || Date.now() > timeline.back + HEAL_WITHIN_MS,
      HEAL_WITHIN_MS,
    );
  } finally {
    scenarioOver = true;
    await health.finished;
  }
  console.log(
    `outage: stop took ${timeline.stopped - timeline.stopping} ms, start took ${timeline.back - timeline.starting} ms; ` +
      `writes: before ${tally(writes.filter(timeline.before))}; during ${tally(writes.filter(timeline.during))}; after ${tally(writes.filter(timeline.after))}; ` +
      `healed after the broker's return: products ${healedAt('product') - timeline.back} ms, orders ${healedAt('order') - timeline.back} ms, ` +
      `ready ${(readyAgain()?.answeredAt ?? Infinity) - timeline.back} ms`,
  );
});

afterAll(async () => {
  if (service) await Promise.race([service.stop(), sleep(10_000)]).then(() => service!.kill());
  await broker?.destroy();
});

describe('broker outage', () => {
  it('acknowledges the burst while the broker is up', () => {
    const settledBefore = writes.filter((w) => w.answeredAt < timeline.stopping);
    expect(settledBefore.length, 'writes answered before the stop').toBeGreaterThanOrEqual(8);
    expect(
      settledBefore.filter((w) => !isAcknowledged(w)).map(timeline.show),
      'writes before the outage that were not acknowledged',
    ).toEqual([]);
  });

  it('answers every write during the outage with 503 unavailable and Retry-After', () => {
    const during = writes.filter(timeline.during);
    expect(during.filter((w) => w.kind === 'product').length, 'product writes sent during the outage').toBeGreaterThanOrEqual(10);
    expect(during.filter((w) => w.kind === 'order').length, 'order writes sent during the outage').toBeGreaterThanOrEqual(10);
    const wrong = during.filter((w) => !(isUnavailable(w) && validRetryAfter(w.retryAfter)));
    expect(
      firstOf(wrong.map(timeline.show)),
      `${wrong.length} of ${during.length} writes during the outage not answered 503 unavailable with a Retry-After header; ${tally(wrong)}`,
    ).toEqual([]);
  });

  it(`answers each write during the outage within ${FAST_503_MS / 1000} s`, () => {
    expectAnsweredWithin(writes, timeline, FAST_503_MS, 'writes');
  });

  it('is not ready while the broker is down, naming kafka, and ready again after its return', () => {
    expectReadinessThrough(health, timeline, 'kafka', { noticeMs: READINESS_NOTICE_MS, healWithinMs: HEAL_WITHIN_MS });
  });

  it('stays alive throughout: /health/live answers 200 in every probe', () => {
    expectAlwaysLive(health, timeline);
  });

  it(`accepts products and orders again within ${HEAL_WITHIN_MS / 1000} s of the broker's return, without a restart`, () => {
    for (const kind of ['product', 'order'] as const) {
      const afterReturn = writes.filter((w) => w.kind === kind && timeline.after(w));
      const firstFailures = afterReturn
        .filter((w) => !isAcknowledged(w))
        .slice(0, 3)
        .map(timeline.show);
      expect
        .soft(
          healedAt(kind) - timeline.back,
          `ms from the return to the first acknowledged ${kind}; after the return: ${tally(afterReturn)}; first failures: ${firstFailures.join(' | ')}`,
        )
        .toBeLessThanOrEqual(HEAL_WITHIN_MS);
    }
  });

  it('keeps every acknowledged product exactly once, created once in the audit log', async () => {
    for (const shop of shops) {
      const acknowledged = writes.filter((w) => w.shop === shop && w.kind === 'product' && isAcknowledged(w));
      const list = await readAs(shop, '/api/v1/pim/products');
      expect(list.status, timeline.show(list)).toBe(200);
      const listed: Array<{ id: string; title: string }> = list.body;
      expect.soft(repeated(listed.map((p) => p.id)), `tenant ${shop.label}: products listed more than once`).toEqual([]);
      expect.soft(repeated(listed.map((p) => p.title)), `tenant ${shop.label}: one write that became several products`).toEqual([]);
      const listedIds = new Set(listed.map((p) => p.id));
      const missing = acknowledged.filter((w) => !listedIds.has(w.body.id)).map((w) => `${timeline.show(w)} -> ${w.body.id}`);
      expect.soft(missing, `tenant ${shop.label}: acknowledged products missing from the list`).toEqual([]);

      const reads = await Promise.all(acknowledged.map((w) => readAs(shop, `/api/v1/pim/products/${w.body.id}`)));
      const unreadable = reads.filter((r, i) => r.status !== 200 || r.body.title !== acknowledged[i]!.title).map(timeline.show);
      expect.soft(unreadable, `tenant ${shop.label}: acknowledged products that do not read back`).toEqual([]);

      const audit = await readAs(shop, '/api/v1/pim/audit');
      expect(audit.status, timeline.show(audit)).toBe(200);
      const created: string[] = audit.body
        .filter((e: { action: string }) => e.action === 'product.created')
        .map((e: { entity_id: string }) => e.entity_id);
      expect.soft(repeated(created), `tenant ${shop.label}: products whose creation is audited more than once`).toEqual([]);
      const unaudited = acknowledged.filter((w) => !created.includes(w.body.id)).map(timeline.show);
      expect.soft(unaudited, `tenant ${shop.label}: acknowledged products without product.created in the audit log`).toEqual([]);
    }
  });

  it('keeps every acknowledged order exactly once, and every order confirmed', async () => {
    for (const shop of shops) {
      const acknowledged = writes.filter((w) => w.shop === shop && w.kind === 'order' && isAcknowledged(w));
      const listed = await allOrders(shop);
      expect.soft(repeated(listed.map((o) => o.id)), `tenant ${shop.label}: orders listed more than once`).toEqual([]);
      expect.soft(repeated(listed.map((o) => o.idempotency_key)), `tenant ${shop.label}: one idempotency key, several orders`).toEqual([]);
      const listedIds = new Set(listed.map((o) => o.id));
      const missing = acknowledged.filter((w) => !listedIds.has(w.body.id)).map((w) => `${timeline.show(w)} -> ${w.body.id}`);
      expect.soft(missing, `tenant ${shop.label}: acknowledged orders missing from the list`).toEqual([]);
      const notConfirmed = listed.filter((o) => o.status !== 'confirmed').map((o) => `${o.id} (${o.idempotency_key}): ${o.status}`);
      expect.soft(notConfirmed, `tenant ${shop.label}: listed orders that are not confirmed`).toEqual([]);

      const reads = await Promise.all(acknowledged.map((w) => readAs(shop, `/api/v1/oms/orders/${w.body.id}`)));
      const unconfirmed = reads
        .filter((r) => r.status !== 200 || r.body.status !== 'confirmed')
        .map((r) => `${timeline.show(r)} ${r.body?.status ?? ''}`);
      expect.soft(unconfirmed, `tenant ${shop.label}: acknowledged orders that do not read back confirmed`).toEqual([]);
    }
  });

  it('reserves exactly the units of the confirmed orders, none stuck in a pending order', async () => {
    for (const shop of shops) {
      const { stock } = shop;
      const reading = async () => {
        const confirmedUnits = (await allOrders(shop))
          .filter((o) => o.status === 'confirmed')
          .flatMap((o) => o.line_items)
          .filter((line) => line.variant_id === stock.variantId && line.location_id === stock.locationId)
          .reduce((sum, line) => sum + line.quantity, 0);
        const level = await readAs(shop, `/api/v1/oms/inventory/levels?variant_id=${stock.variantId}&location_id=${stock.locationId}`);
        const { available, reserved, on_hand } = level.body?.[0] ?? {};
        return { confirmedUnits, level: { available, reserved, on_hand } };
      };
      // An order that was in flight when the broker went away may still be on its way to confirmed.
      const { confirmedUnits, level } = await eventually(reading, (r) => r.level.reserved === r.confirmedUnits, 15_000);
      const acknowledgedUnits = writes
        .filter((w) => w.shop === shop && w.kind === 'order' && isAcknowledged(w))
        .reduce((sum, w) => sum + w.quantity!, 0);
      expect
        .soft(confirmedUnits, `tenant ${shop.label}: units of confirmed orders vs units of acknowledged orders`)
        .toBeGreaterThanOrEqual(acknowledgedUnits);
      expect.soft(level, `tenant ${shop.label}: stock level vs the ${confirmedUnits} units of its confirmed orders`).toEqual({
        available: INITIAL_STOCK - confirmedUnits,
        reserved: confirmedUnits,
        on_hand: INITIAL_STOCK,
      });
    }
  });
});

type ListedOrder = {
  id: string;
  idempotency_key: string;
  status: string;
  line_items: Array<{ variant_id: string | null; location_id: string | null; quantity: number }>;
};

async function allOrders(shop: Shop): Promise<ListedOrder[]> {
  const orders: ListedOrder[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await readAs(shop, `/api/v1/oms/orders?limit=100&offset=${offset}`);
    expect(page.status, timeline.show(page)).toBe(200);
    orders.push(...page.body.data);
    if (page.body.data.length < 100) return orders;
  }
}
