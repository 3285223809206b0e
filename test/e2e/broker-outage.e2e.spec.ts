// Issue 8: the broker goes away while two tenants keep writing, and comes back. The service must answer 503
// quickly while it is gone and heal by itself, in the same process, losing and duplicating nothing.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startPrivateKafka, type PrivateKafka } from '../support/private-kafka.ts';
import {
  OutageTimeline,
  eventually,
  firstOf,
  isAcknowledged,
  isUnavailable,
  probeHealth,
  tally,
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
import { WriteStreams, type Write } from '../support/write-streams.ts';

const WARM_UP_MS = 4_000;
/**
 * The broker stops once this many writes have been answered, and at least WARM_UP_MS after the first was sent: a service
 * just started on a loaded machine answers its first writes slowly (within WARM_UP_WITHIN_MS).
 */
const ANSWERED_BEFORE_STOP = 8;
const WARM_UP_WITHIN_MS = 60_000;
const OUTAGE_MS = 15_000;
/** Per tenant and kind (product, order): four writes a second in all. */
const WRITE_EVERY_MS = 1_000;
const MAX_WRITES_PER_STREAM = 75;
const FAST_503_MS = 5_000;
/** Readiness may come from a periodic check; give it this long to notice before holding it to 503. */
const READINESS_NOTICE_MS = 3_000;
const HEAL_WITHIN_MS = 30_000;
const READY_BEFORE_MS = 60_000;
const KEEP_WRITING_AFTER_HEAL_MS = 3_000;
const INITIAL_STOCK = 1_000;

let broker: PrivateKafka | undefined;
let service: Service | undefined;
let streams: WriteStreams;
const writes = (): Write[] => streams.writes;
const timeline = new OutageTimeline();
let health: ReturnType<typeof probeHealth>;

/** When the first write of `kind` sent after the broker's return was acknowledged. */
const healedAt = (kind: Write['kind']): number =>
  Math.min(
    ...writes()
      .filter((w) => w.kind === kind && timeline.after(w) && isAcknowledged(w))
      .map((w) => w.answeredAt),
  );

const enoughWrites = (): boolean => {
  const healed = Math.max(healedAt('product'), healedAt('order'));
  return Date.now() > timeline.back + HEAL_WITHIN_MS || Date.now() > healed + KEEP_WRITING_AFTER_HEAL_MS;
};

const readyAgain = (): Answer | undefined => readyAgainOf(health, timeline);

beforeAll(async () => {
  broker = await startPrivateKafka('broker-outage');
  service = await startServiceProcess({ ...inject('stack'), kafkaBrokers: broker.brokers }, { namespace: uniqueName('broker-outage') });
  console.log(`service log: .stack/logs/test-services/${service.namespace}.log; broker: ${broker.dir}`);
  streams = await WriteStreams.open(service.baseUrl, { initialStock: INITIAL_STOCK });
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
  const writing = streams.run({ everyMs: WRITE_EVERY_MS, max: MAX_WRITES_PER_STREAM, enough: () => scenarioOver || enoughWrites() });
  try {
    await sleep(WARM_UP_MS);
    await eventually(
      async () => writes().length,
      (answered) => answered >= ANSWERED_BEFORE_STOP,
      WARM_UP_WITHIN_MS,
    );
    await timeline.outage(broker, OUTAGE_MS);
    await writing;
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
      `writes: before ${tally(writes().filter(timeline.before))}; during ${tally(writes().filter(timeline.during))}; after ${tally(writes().filter(timeline.after))}; ` +
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
    const settledBefore = writes().filter((w) => w.answeredAt < timeline.stopping);
    expect(settledBefore.length, 'writes answered before the stop').toBeGreaterThanOrEqual(ANSWERED_BEFORE_STOP);
    expect(
      settledBefore.filter((w) => !isAcknowledged(w)).map(timeline.show),
      'writes before the outage that were not acknowledged',
    ).toEqual([]);
  });

  it('answers every write during the outage with 503 unavailable and Retry-After', () => {
    const during = writes().filter(timeline.during);
    expect(during.filter((w) => w.kind === 'product').length, 'product writes sent during the outage').toBeGreaterThanOrEqual(10);
    expect(during.filter((w) => w.kind === 'order').length, 'order writes sent during the outage').toBeGreaterThanOrEqual(10);
    const wrong = during.filter((w) => !(isUnavailable(w) && validRetryAfter(w.retryAfter)));
    expect(
      firstOf(wrong.map(timeline.show)),
      `${wrong.length} of ${during.length} writes during the outage not answered 503 unavailable with a Retry-After header; ${tally(wrong)}`,
    ).toEqual([]);
  });

  it(`answers each write during the outage within ${FAST_503_MS / 1000} s`, () => {
    expectAnsweredWithin(writes(), timeline, FAST_503_MS, 'writes');
  });

  it('is not ready while the broker is down, naming kafka, and ready again after its return', () => {
    expectReadinessThrough(health, timeline, 'kafka', { noticeMs: READINESS_NOTICE_MS, healWithinMs: HEAL_WITHIN_MS });
  });

  it('stays alive throughout: /health/live answers 200 in every probe', () => {
    expectAlwaysLive(health, timeline);
  });

  it(`accepts products and orders again within ${HEAL_WITHIN_MS / 1000} s of the broker's return, without a restart`, () => {
    for (const kind of ['product', 'order'] as const) {
      const afterReturn = writes().filter((w) => w.kind === kind && timeline.after(w));
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
    for (const shop of streams.shops) expect.soft(await streams.productProblems(shop)).toEqual([]);
  });

  it('keeps every acknowledged order exactly once, every order confirmed, and reserves exactly their units', async () => {
    for (const shop of streams.shops) expect.soft(await streams.orderProblems(shop)).toEqual([]);
  });
});
