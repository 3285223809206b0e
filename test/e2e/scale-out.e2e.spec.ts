import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { productAggregate } from '../../commands/catalog/product.ts';
import { inventoryAggregate } from '../../commands/oms/inventory.ts';
import { orderAggregate, orderIdOf } from '../../commands/oms/order.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { newTenant, type Tenant } from '../support/client.ts';
import { readEvents } from '../support/event-log.ts';
import { repeated } from '../support/private-outage.ts';
import { orderRequest, stocked } from '../support/orders.ts';
import {
  allOrders,
  allProducts,
  call,
  countBy,
  inParallel,
  partitionCount,
  partitionOf,
  partRestarts,
  pollUntil,
  readiness,
  signal,
  sleep,
  steadyWindow,
  transactionalRestarts,
  waitUntilReady,
  type Answer,
} from '../support/scale-out.ts';
import { startService, uniqueName, type Service } from '../support/service.ts';

// Several instances of one namespace and database: the consumer groups share the partitions out, and each instance's
// command processors and routers must own only their partitions' transactions (one transactional producer per assigned
// input partition). A second instance must not fence the first; a dead one's partitions move to the others once its
// session (10 s) expires; and one that was paused while its partitions moved (a zombie) must not commit what it had
// decided. Each describe has a namespace and database of its own, removed afterwards.

const PRODUCTS = '/api/v1/pim/products';
const ORDERS = '/api/v1/oms/orders';

/**
 * A write acknowledged as done. An order refused for lack of stock (409) is acknowledged too, as a refusal; a 503, a
 * timeout or a socket error acknowledges nothing: the write may or may not have happened.
 */
const isCreated = (answer: Answer) => answer.status === 201;

const tally = (answers: Answer[]) => Object.fromEntries(countBy(answers, (answer) => String(answer.status)));

const startAll = async (count: number, namespace: string, database: string, into: Service[]) => {
  const started = await Promise.allSettled(Array.from({ length: count }, () => startService({ namespace, database })));
  for (const result of started) if (result.status === 'fulfilled') into.push(result.value);
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
};

/** The product list: each product once, every acknowledged one there, and exactly what the log created. */
const expectListedOnce = (listed: string[], acknowledged: string[], created: string[]) => {
  expect(repeated(listed), 'products listed more than once').toEqual([]);
  expect(
    acknowledged.filter((id) => !listed.includes(id)),
    'acknowledged products missing from the list',
  ).toEqual([]);
  expect([...listed].sort(), 'the list is what the log created').toEqual([...created].sort());
};

/** A steady window (`when`: through which instances, at what point): every write created, every probe ready, no restart. */
const expectSteady = (steady: Awaited<ReturnType<typeof steadyWindow>>, when: string) => {
  expect.soft(tally(steady.answers), `writes ${when}`).toEqual({ '201': steady.answers.length });
  expect
    .soft(
      steady.readiness.filter((row) => row.some((status) => status !== 200)),
      `readiness probes not 200 ${when}`,
    )
    .toEqual([]);
  expect.soft(steady.restartsAfter, `restarts of processors and routers ${when}`).toEqual(steady.restartsBefore);
};

const eventIds = (...logs: RecordedEvent[][]) => logs.flat().map((event) => event.envelope.eventId);

describe('scale-out: three instances share the partitions; one killed, one added', () => {
  const namespace = uniqueName('scale');
  const database = `cl_${namespace.replace(/-/g, '_')}`;
  let first: Service | undefined;
  const others: Service[] = [];

  beforeAll(async () => {
    // The first creates the topics and the schemas; the other two join it.
    first = await startService({ namespace, database });
    await startAll(2, namespace, database, others);
  });

  afterAll(async () => {
    for (const service of others) await service.stop();
    await first?.discard();
  });

  it('keeps every acknowledged write exactly once, decides every order once and never oversells', { timeout: 300_000 }, async () => {
    const [second, third] = others as [Service, Service];
    const members = [first!, second, third];
    const tenant = await newTenant(first!.baseUrl);

    const ready = await waitUntilReady(members, 60_000);
    expect.soft(ready.statuses, 'readiness of the three instances before the burst').toEqual([200, 200, 200]);

    // Three variants, 6 units each (a set level is idempotent, so a retry of a refused setup step is harmless).
    const STOCKED = 6;
    const stock = await Promise.all(
      [0, 1, 2].map(async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await stocked(tenant, STOCKED);
          } catch (error) {
            if (attempt >= 5) throw error;
            await sleep(2_000);
          }
        }
      }),
    );
    const stockedUnits = STOCKED * stock.length;

    // ── The burst: 8 writes in flight, round-robin over the live instances; of every five writes two are orders ────────
    // (five is prime to the two or three live instances, so every instance gets both kinds).
    type Write = {
      kind: 'product' | 'order';
      via: string;
      answer: Answer;
      phase: 'burst' | 'steady' | 'idempotency';
      sentAt: number;
      /** The product's id from the answer, or the order's id (derived from its idempotency key, so known before it is sent). */
      id?: string;
      variant?: number;
      quantity?: number;
    };
    const writes: Write[] = [];
    const targets: Service[] = [...members];
    const victim = second;
    let turn = 0;
    let sequence = 0;
    let orders = 0;
    let orderedUnits = 0;
    let stopBurst = false;
    let killedAt: number | undefined;
    let fourth: Service | undefined;

    const writeOnce = async (i: number): Promise<void> => {
      const target = targets[turn++ % targets.length]!;
      const sentAt = Date.now();
      if (i % 5 !== 1 && i % 5 !== 3) {
        const answer = await call(target.baseUrl, tenant, 'POST', PRODUCTS, { body: { title: `scale-out ${i}` } });
        const id = isCreated(answer) ? (answer.body.id as string) : undefined;
        writes.push({ kind: 'product', via: target.baseUrl, answer, phase: 'burst', sentAt, ...(id ? { id } : {}) });
        return;
      }
      const variant = orders % stock.length;
      const quantity = 1 + (Math.floor(orders / stock.length) % 2);
      orders++;
      orderedUnits += quantity;
      const { variantId, locationId } = stock[variant]!;
      const key = randomUUID();
      const body = orderRequest({
        idempotency_key: key,
        line_items: [{ name: `Variant ${variant}`, quantity, unit_price: '5.00', variant_id: variantId, location_id: locationId }],
      });
      const answer = await call(target.baseUrl, tenant, 'POST', ORDERS, { body });
      writes.push({
        kind: 'order',
        via: target.baseUrl,
        answer,
        phase: 'burst',
        sentAt,
        id: orderIdOf(tenant.tenantId, tenant.orgId, key),
        variant,
        quantity,
      });
    };
    const worker = async () => {
      while (!stopBurst) await writeOnce(sequence++);
    };

    // Stock levels as the read model shows them, sampled all along the burst.
    const samples: { variant_id: string; available: number; reserved: number; on_hand: number }[] = [];
    const sampler = async () => {
      while (!stopBurst) {
        const levels = await call(first!.baseUrl, tenant, 'GET', '/api/v1/oms/inventory/levels', { timeoutMs: 5_000 });
        if (levels.status === 200) samples.push(...levels.body);
        await sleep(200);
      }
    };

    const acknowledgedBy = (baseUrl: string) =>
      writes.filter((w) => w.phase === 'burst' && w.via === baseUrl && isCreated(w.answer)).length;
    const controller = async () => {
      const warm = await pollUntil(
        async () => writes.filter((w) => isCreated(w.answer)).length,
        (n) => n >= 30,
        { deadlineMs: 60_000, intervalMs: 20 },
      );
      expect.soft(warm.value, 'writes acknowledged before the kill').toBeGreaterThanOrEqual(30);
      // SIGKILL one instance mid-burst: its in-flight requests fail at the socket; nothing more is sent to it.
      killedAt = Date.now();
      const killing = victim.kill();
      targets.splice(targets.indexOf(victim), 1);
      await killing;
      // A fourth joins while the burst goes on.
      const added = await startService({ namespace, database });
      others.push(added);
      fourth = added;
      targets.push(added);
      // Go on until the dead member's partitions have had time to move (its session is 10 s), the newcomer has
      // acknowledged writes, and twice the stock has been ordered.
      await pollUntil(
        async () => undefined,
        () => acknowledgedBy(added.baseUrl) >= 5 && Date.now() - killedAt! >= 20_000 && orderedUnits >= 2 * stockedUnits,
        { deadlineMs: 90_000, intervalMs: 100 },
      );
      stopBurst = true;
    };

    try {
      await Promise.all([controller(), sampler(), ...Array.from({ length: 8 }, worker)]);
    } finally {
      stopBurst = true;
    }
    const live = [first!, third, fourth!];
    const burst = writes.filter((w) => w.phase === 'burst');

    // ── Settle: every live instance ready, every order that reached the log decided ────────────────────────────────
    const settled = await waitUntilReady(live, 90_000);
    expect.soft(settled.statuses, 'readiness of the live instances after the burst').toEqual([200, 200, 200]);
    const undecided = (events: RecordedEvent[]) => {
      const decided = new Set(events.filter((e) => e.type !== 'OrderPlaced').map((e) => e.envelope.aggregateId));
      return events.filter((e) => e.type === 'OrderPlaced' && !decided.has(e.envelope.aggregateId));
    };
    await pollUntil(
      () => readEvents(namespace, orderAggregate.events),
      (events) => undecided(events).length === 0,
      { deadlineMs: 60_000, intervalMs: 1_000 },
    );

    // ── Steady: for 15 s, writes through every live instance all succeed, every instance stays ready, and no processor
    // or router restarts (instances of one namespace must not fence each other's transactions) ────────────────────────
    const steady = await steadyWindow(live, { durationMs: 15_000, inFlight: 6 }, async (target, i) => {
      const sentAt = Date.now();
      const answer = await call(target.baseUrl, tenant, 'POST', PRODUCTS, { body: { title: `steady ${i}` } });
      const id = isCreated(answer) ? (answer.body.id as string) : undefined;
      writes.push({ kind: 'product', via: target.baseUrl, answer, phase: 'steady', sentAt, ...(id ? { id } : {}) });
      return answer;
    });
    expectSteady(steady, 'through the three live instances once settled');

    // ── Idempotency keys hold across instances: one key, the same body, two instances at once ──────────────────────
    const pairs = live.map((service, i) => [service, live[(i + 1) % live.length]!] as const);
    const keyed = await Promise.all(
      pairs.map(async ([one, other]) => {
        const key = randomUUID();
        const orderId = orderIdOf(tenant.tenantId, tenant.orgId, key);
        const order = orderRequest({ idempotency_key: key });
        const productKey = `scale-out-${randomUUID()}`;
        const product = { title: `Keyed ${productKey}` };
        const sentAt = Date.now();
        const [orderAnswers, productAnswers] = await Promise.all([
          Promise.all([one, other].map((s) => call(s.baseUrl, tenant, 'POST', ORDERS, { body: order }))),
          Promise.all(
            [one, other].map((s) =>
              call(s.baseUrl, tenant, 'POST', PRODUCTS, { body: product, headers: { 'idempotency-key': productKey } }),
            ),
          ),
        ]);
        orderAnswers.forEach((answer, i) =>
          writes.push({ kind: 'order', via: [one, other][i]!.baseUrl, answer, phase: 'idempotency', sentAt, id: orderId }),
        );
        productAnswers.forEach((answer, i) => {
          const id = isCreated(answer) ? (answer.body.id as string) : undefined;
          writes.push({ kind: 'product', via: [one, other][i]!.baseUrl, answer, phase: 'idempotency', sentAt, ...(id ? { id } : {}) });
        });
        return { orderId, orderAnswers, productAnswers };
      }),
    );
    for (const { orderId, orderAnswers, productAnswers } of keyed) {
      expect
        .soft(
          orderAnswers.map((a) => a.status),
          `one order key sent to two instances at once: ${orderId}`,
        )
        .toEqual([201, 201]);
      expect.soft(orderAnswers.map((a) => a.body?.id)).toEqual([orderId, orderId]);
      expect
        .soft(
          productAnswers.map((a) => a.status),
          'one product key sent to two instances at once',
        )
        .toEqual([201, 201]);
      expect.soft(productAnswers[1]?.body?.id, 'both answers name the same product').toBe(productAnswers[0]?.body?.id);
    }

    // ── The log, read as a downstream subscriber reads it (read_committed) ─────────────────────────────────────────
    const orderEvents = (
      await pollUntil(
        () => readEvents(namespace, orderAggregate.events),
        (events) => undecided(events).length === 0,
        { deadlineMs: 60_000, intervalMs: 1_000 },
      )
    ).value;
    const productEvents = await readEvents(namespace, productAggregate.events);
    const inventoryEvents = await readEvents(namespace, inventoryAggregate.events);

    const summary = {
      burst: tally(burst.map((w) => w.answer)),
      byInstance: Object.fromEntries(
        [...members, fourth!].map((s, i) => [`#${i + 1}`, tally(burst.filter((w) => w.via === s.baseUrl).map((w) => w.answer))]),
      ),
      steady: { ...tally(steady.answers), restartsBefore: steady.restartsBefore, restartsAfter: steady.restartsAfter },
      killedAfterMs: killedAt === undefined ? undefined : killedAt - (burst[0]?.sentAt ?? killedAt),
    };
    console.log(`scale-out burst: ${JSON.stringify(summary)}`);

    // No event was written twice (event ids are derived from the command id: a re-decided command repeats them).
    expect(repeated(eventIds(productEvents, orderEvents, inventoryEvents)), 'event ids written twice').toEqual([]);

    // Products: each acknowledged one created once in the log, readable by id, listed once.
    const acknowledgedProducts = writes.filter((w) => w.kind === 'product' && w.id).map((w) => w.id!);
    const createdCount = countBy(
      productEvents.filter((e) => e.type === 'ProductCreated'),
      (e) => e.envelope.aggregateId,
    );
    expect(
      [...createdCount].filter(([, n]) => n > 1),
      'products created more than once',
    ).toEqual([]);
    expect(
      [...new Set(acknowledgedProducts)].filter((id) => createdCount.get(id) !== 1),
      'acknowledged products without exactly one ProductCreated',
    ).toEqual([]);
    const unreadable: string[] = [];
    await inParallel(acknowledgedProducts.length, 8, async (i) => {
      const id = acknowledgedProducts[i]!;
      const read = await call(live[i % live.length]!.baseUrl, tenant, 'GET', `${PRODUCTS}/${id}`);
      if (read.status !== 200 || read.body.id !== id) unreadable.push(`${id}: ${read.status}`);
    });
    expect(unreadable, 'acknowledged products not readable by id').toEqual([]);
    const listed = await pollUntil(
      () => allProducts(first!.baseUrl, tenant),
      (products) => products !== undefined && products.length >= createdCount.size,
      { deadlineMs: 30_000 },
    );
    const listedIds = (listed.value ?? []).map((p) => p.id);
    expectListedOnce(listedIds, acknowledgedProducts, [...createdCount.keys()]);

    // Orders: every order in the log placed once and decided once; each acknowledged answer is the log's decision.
    const placed = countBy(
      orderEvents.filter((e) => e.type === 'OrderPlaced'),
      (e) => e.envelope.aggregateId,
    );
    const decisions = countBy(
      orderEvents.filter((e) => e.type === 'OrderConfirmed' || e.type === 'OrderRejected'),
      (e) => e.envelope.aggregateId,
    );
    expect(
      [...placed].filter(([, n]) => n !== 1),
      'orders placed more than once',
    ).toEqual([]);
    expect(
      [...placed.keys()].filter((id) => decisions.get(id) !== 1).map((id) => `${id}: ${decisions.get(id) ?? 0} decisions`),
      'orders not decided exactly once',
    ).toEqual([]);
    expect(
      [...decisions.keys()].filter((id) => !placed.has(id)),
      'decisions of orders never placed',
    ).toEqual([]);
    const decisionOf = new Map(
      orderEvents.filter((e) => e.type === 'OrderConfirmed' || e.type === 'OrderRejected').map((e) => [e.envelope.aggregateId, e.type]),
    );
    const orderWrites = writes.filter((w) => w.kind === 'order');
    const confirmed = orderWrites.filter((w) => w.answer.status === 201);
    const refused = orderWrites.filter((w) => w.answer.status === 409);
    expect
      .soft(
        burst.filter((w) => w.kind === 'order' && w.answer.status === 409).length,
        'burst orders refused for lack of stock (the burst orders twice the stock)',
      )
      .toBeGreaterThan(0);
    expect.soft(burst.filter((w) => w.kind === 'order' && w.answer.status === 201).length, 'burst orders confirmed').toBeGreaterThan(0);
    expect(
      [
        ...confirmed.filter((w) => w.answer.body?.id !== w.id || decisionOf.get(w.id!) !== 'OrderConfirmed'),
        ...refused.filter((w) => decisionOf.get(w.id!) !== 'OrderRejected'),
      ].map((w) => `${w.id}: answered ${w.answer.status}, logged ${decisionOf.get(w.id!)}`),
      'acknowledged orders whose answer is not the logged decision',
    ).toEqual([]);
    // The read model shows every decided order (pending ones are not listed) once it has caught up with the log.
    const orderRows =
      (
        await pollUntil(
          () => allOrders(first!.baseUrl, tenant),
          (rows) => rows !== undefined && rows.length >= decisions.size,
          { deadlineMs: 30_000 },
        )
      ).value ?? [];
    expect(repeated(orderRows.map((o) => o.id)), 'orders listed more than once').toEqual([]);
    const rowStatus = new Map(orderRows.map((o) => [o.id as string, o.status as string]));
    expect(
      [...confirmed.filter((w) => rowStatus.get(w.id!) !== 'confirmed'), ...refused.filter((w) => rowStatus.get(w.id!) !== 'rejected')].map(
        (w) => `${w.id}: answered ${w.answer.status}, listed ${rowStatus.get(w.id!)}`,
      ),
      'acknowledged orders the read model shows otherwise',
    ).toEqual([]);
    for (const { orderId } of keyed) {
      expect(placed.get(orderId), `OrderPlaced of the order keyed across two instances ${orderId}`).toBe(1);
      expect(orderRows.filter((o) => o.id === orderId)).toHaveLength(1);
      expect((await call(live[2]!.baseUrl, tenant, 'GET', `${ORDERS}/${orderId}`)).status).toBe(200);
    }
    for (const { productAnswers } of keyed) {
      const id = productAnswers[0]?.body?.id as string;
      expect(createdCount.get(id), `ProductCreated of the product keyed across two instances ${id}`).toBe(1);
      expect(listedIds.filter((listedId) => listedId === id)).toHaveLength(1);
    }

    // Stock: one reservation decision per stocked order; never below zero; never more confirmed than stocked.
    const reservationDecisions = countBy(
      inventoryEvents.filter((e) => e.type === 'StockReserved' || e.type === 'StockReservationRefused'),
      (e) => (e.data as { orderId: string }).orderId,
    );
    const stockedOrders = burst.filter((w) => w.kind === 'order' && placed.has(w.id!)).map((w) => w.id!);
    expect(
      stockedOrders.filter((id) => reservationDecisions.get(id) !== 1).map((id) => `${id}: ${reservationDecisions.get(id) ?? 0}`),
      'stocked orders without exactly one reservation decision',
    ).toEqual([]);
    const ours = new Set(stock.map((s) => s.variantId));
    expect(
      samples.filter((s) => ours.has(s.variant_id) && (s.available < 0 || s.reserved < 0 || s.on_hand < 0)),
      'stock levels sampled below zero during the burst',
    ).toEqual([]);
    expect(samples.length, 'stock level samples taken during the burst').toBeGreaterThan(0);
    const confirmedRows = orderRows.filter((o) => o.status === 'confirmed');
    const linesOf = new Map(
      orderEvents
        .filter((e) => e.type === 'OrderPlaced')
        .map((e) => [e.envelope.aggregateId, (e.data as { lines: { variantId: string | null; quantity: number }[] }).lines]),
    );
    for (const [index, { variantId, locationId }] of stock.entries()) {
      const unitsOf = (lines: { variantId: string | null; quantity: number }[]) =>
        lines.filter((line) => line.variantId === variantId).reduce((sum, line) => sum + line.quantity, 0);
      const confirmedUnits = [...decisionOf]
        .filter(([, type]) => type === 'OrderConfirmed')
        .reduce((sum, [id]) => sum + unitsOf(linesOf.get(id) ?? []), 0);
      const reservedInLog = inventoryEvents
        .filter((e) => e.type === 'StockReserved')
        .reduce((sum, e) => sum + unitsOf((e.data as { lines: { variantId: string; quantity: number }[] }).lines), 0);
      const listedUnits = confirmedRows
        .flatMap((o) => o.line_items as { variant_id: string | null; quantity: number }[])
        .filter((line) => line.variant_id === variantId)
        .reduce((sum, line) => sum + line.quantity, 0);
      expect(confirmedUnits, `variant ${index}: units of confirmed orders`).toBeLessThanOrEqual(STOCKED);
      expect(reservedInLog, `variant ${index}: units reserved in the log`).toBe(confirmedUnits);
      expect(listedUnits, `variant ${index}: units of the confirmed orders listed`).toBe(confirmedUnits);
      const level = await pollUntil(
        async () =>
          (await call(first!.baseUrl, tenant, 'GET', `/api/v1/oms/inventory/levels?variant_id=${variantId}&location_id=${locationId}`))
            .body?.[0],
        (row) => row?.reserved === confirmedUnits,
        { deadlineMs: 30_000 },
      );
      expect(level.value, `variant ${index}: its level`).toMatchObject({
        available: STOCKED - confirmedUnits,
        reserved: confirmedUnits,
        on_hand: STOCKED,
      });
    }

    // The burst went on across the kill, and the newcomer took its share.
    expect.soft(acknowledgedBy(fourth!.baseUrl), 'writes acknowledged by the fourth instance').toBeGreaterThanOrEqual(5);
    expect
      .soft(
        burst.filter((w) => killedAt !== undefined && w.sentAt > killedAt + 12_000 && isCreated(w.answer)).length,
        'writes acknowledged once the killed member had left',
      )
      .toBeGreaterThan(0);
  });
});

describe('scale-out: a paused zombie cannot commit', () => {
  const namespace = uniqueName('zombie');
  const database = `cl_${namespace.replace(/-/g, '_')}`;
  let a: Service | undefined;
  let b: Service | undefined;
  let paused: number | undefined;

  beforeAll(async () => {
    // Both do everything. A projection of A paused inside its Postgres transaction holds the read model's advisory lock
    // until Postgres ends the idle transaction (PROJECTION_IDLE_TIMEOUT_MS), after which B's projections go on.
    b = await startService({ namespace, database });
    a = await startService({ namespace, database });
  });

  afterAll(async () => {
    // A stopped process would neither stop nor let the run end.
    signal(paused, 'SIGCONT');
    await a?.stop();
    await b?.discard();
  });

  it('commits nothing once its partitions have moved: no event twice, every acknowledged product once', { timeout: 240_000 }, async () => {
    const A = a!;
    const B = b!;
    const tenant: Tenant = await newTenant(A.baseUrl);
    const ready = await waitUntilReady([A, B], 60_000);
    expect.soft(ready.statuses, 'readiness of A and B before the pause').toEqual([200, 200]);
    const partitions = await partitionCount(namespace, productAggregate.commands);

    type Write = { via: 'A' | 'B'; phase: 'stream' | 'takeover' | 'steady'; answer: Answer; id?: string };
    const writes: Write[] = [];
    const product = async (service: Service, phase: Write['phase'], timeoutMs: number) => {
      const via = service === A ? 'A' : 'B';
      const answer = await call(service.baseUrl, tenant, 'POST', PRODUCTS, {
        body: { title: `zombie ${via} ${writes.length}` },
        timeoutMs,
      });
      const id = isCreated(answer) ? (answer.body.id as string) : undefined;
      writes.push({ via, phase, answer, ...(id ? { id } : {}) });
      return answer;
    };

    // A continuous stream through A, 6 in flight. What is in flight when A stops is answered once it resumes.
    let streaming = true;
    const stream = Promise.all(
      Array.from({ length: 6 }, async () => {
        while (streaming) await product(A, 'stream', 110_000);
      }),
    );
    let pausedAt: number;
    let takeover: { afterMs: number; run: number } | undefined;
    const restartsBeforePause = transactionalRestarts(await partRestarts(A));
    try {
      const warm = await pollUntil(
        async () => writes.filter((w) => w.via === 'A' && w.id).length,
        (n) => n >= 20,
        { deadlineMs: 60_000, intervalMs: 10 },
      );
      expect.soft(warm.value, 'writes acknowledged by A before the pause').toBeGreaterThanOrEqual(20);

      // Pause A mid-stream: it keeps its open transactions and its group memberships until its sessions expire.
      paused = A.pid()!;
      process.kill(paused, 'SIGSTOP');
      pausedAt = Date.now();
      streaming = false;

      // Write through B until a run of its writes, all created, covers every partition: B then decides them all.
      const covered = new Set<number>();
      let run = 0;
      while (Date.now() - pausedAt < 75_000) {
        const round = await inParallel(6, 6, () => product(B, 'takeover', 30_000));
        if (round.every(isCreated)) {
          for (const answer of round) covered.add(partitionOf(answer.body.id, partitions));
          run += round.length;
          if (covered.size === partitions && run >= 12) {
            takeover = { afterMs: Date.now() - pausedAt, run };
            break;
          }
        } else {
          covered.clear();
          run = 0;
        }
      }
    } finally {
      streaming = false;
      signal(paused, 'SIGCONT');
      paused = undefined;
    }
    const resumedAt = Date.now();
    await stream;
    expect.soft(takeover, 'B took over: a run of writes through B, all created, covering every partition').toBeDefined();
    // And A was a zombie worth the name: it held partitions when it stopped, so B could not decide their commands
    // before A's session (10 s) had expired.
    expect.soft(takeover?.afterMs, 'time from the pause until B decided on every partition').toBeGreaterThanOrEqual(5_000);

    // A runs again: whatever it had decided before the pause must not land. Give it at least 15 s to find out, and
    // until both are ready (a part that failed keeps its instance unready for 10 s).
    const recovered = await pollUntil(
      () => Promise.all([A, B].map(readiness)),
      (statuses) => statuses.every((status) => status === 200) && Date.now() - resumedAt >= 15_000,
      { deadlineMs: 75_000, intervalMs: 500 },
    );
    expect.soft(recovered.value, 'readiness of A and B after A resumed').toEqual([200, 200]);
    const restartsAfterResume = transactionalRestarts(await partRestarts(A));

    // Then for 15 s writes through both succeed, both stay ready, and neither restarts a processor or router.
    const steady = await steadyWindow([A, B], { durationMs: 15_000, inFlight: 4 }, (service) => product(service, 'steady', 30_000));
    expectSteady(steady, 'through A and B after A resumed');
    expect.soft(steady.answers.length, 'writes through A and B after A resumed').toBeGreaterThanOrEqual(8);

    const events = await readEvents(namespace, productAggregate.events);
    console.log(
      `zombie: ${JSON.stringify({
        stream: tally(writes.filter((w) => w.phase === 'stream').map((w) => w.answer)),
        takeover: { ...tally(writes.filter((w) => w.phase === 'takeover').map((w) => w.answer)), ...takeover },
        steady: { ...tally(steady.answers), restartsBefore: steady.restartsBefore, restartsAfter: steady.restartsAfter },
        restartsOfA: { beforePause: restartsBeforePause, afterResume: restartsAfterResume },
        events: events.length,
      })}`,
    );

    // A zombie commit of a command that B decided too would repeat its event ids (derived from the command id).
    expect(repeated(eventIds(events)), 'event ids written twice').toEqual([]);
    const created = events.filter((e) => e.type === 'ProductCreated');
    const createdCount = countBy(created, (e) => e.envelope.aggregateId);
    expect(
      [...createdCount].filter(([, n]) => n > 1),
      'products created more than once',
    ).toEqual([]);

    const acknowledged = writes.filter((w) => w.id).map((w) => w.id!);
    expect(repeated(acknowledged), 'one product id acknowledged twice').toEqual([]);
    expect(
      acknowledged.filter((id) => createdCount.get(id) !== 1),
      'acknowledged products without exactly one ProductCreated',
    ).toEqual([]);
    // Each landed on the partition the takeover check computed for it.
    expect(
      created.filter((e) => partitionOf(e.envelope.aggregateId, partitions) !== e.position.partition).map((e) => e.envelope.aggregateId),
      'products on another partition than partitionOf says',
    ).toEqual([]);
    const unreadable: string[] = [];
    await inParallel(acknowledged.length, 8, async (i) => {
      const id = acknowledged[i]!;
      const read = await call((i % 2 === 0 ? A : B).baseUrl, tenant, 'GET', `${PRODUCTS}/${id}`);
      if (read.status !== 200) unreadable.push(`${id}: ${read.status}`);
    });
    expect(unreadable, 'acknowledged products not readable by id').toEqual([]);
    const listed = ((await allProducts(B.baseUrl, tenant)) ?? []).map((p) => p.id);
    expectListedOnce(listed, acknowledged, [...createdCount.keys()]);
  });
});
