import { describe, expect, it } from 'vitest';
import { FeedSchedule } from '../../consumers/feed/feed-schedule.ts';

const end = (partition: number, lastOffset: number) => ({ topic: 'products', partition, lastOffset: String(lastOffset) });

/** Drives a schedule like the worker: every due build starts at once and takes `buildMs`; counts the builds. */
function simulate(changesAt: number[], { quietMs = 1_000, maxDelayMs = 5_000, buildMs = 100, until = 60_000, restFactor = 0 } = {}) {
  const schedule = new FeedSchedule(quietMs, maxDelayMs, restFactor);
  const builds: number[] = [];
  let buildEnds: number | undefined;
  let next = 0;
  for (let now = 0; now <= until; now += 10) {
    while (next < changesAt.length && (changesAt[next] as number) <= now) schedule.consumed(['t/o'], end(0, next++), now);
    if (buildEnds !== undefined && now >= buildEnds) {
      schedule.finished('t/o', true, now, buildMs);
      buildEnds = undefined;
    }
    for (const key of schedule.due(now)) {
      schedule.started(key);
      builds.push(now);
      buildEnds = now + buildMs;
    }
  }
  return { builds, schedule };
}

describe('FeedSchedule (debounce per tenant)', () => {
  it('builds a burst once, a quiet period after its last change', () => {
    const burst = Array.from({ length: 1_000 }, (_, i) => i * 2); // 1 000 changes over 2 s
    const { builds } = simulate(burst);
    expect(builds).toEqual([2_000 - 2 + 1_000 + 2]);
  });

  it('builds about every maxDelay under continuous changes, never more often than they allow', () => {
    const continuous = Array.from({ length: 2_000 }, (_, i) => i * 10); // one change every 10 ms for 20 s
    const { builds } = simulate(continuous);
    expect(builds.length).toBeGreaterThanOrEqual(4);
    expect(builds.length).toBeLessThanOrEqual(6);
    for (let i = 1; i < builds.length; i++) expect((builds[i] as number) - (builds[i - 1] as number)).toBeGreaterThanOrEqual(5_000);
  });

  it('rests a feed restFactor times its last build before the next, so a slow build under continuous changes takes a bounded share of the time', () => {
    const continuous = Array.from({ length: 6_000 }, (_, i) => i * 10); // one change every 10 ms for 60 s
    const { builds } = simulate(continuous, { buildMs: 2_000, restFactor: 4 });
    // Without the rest a 2 s build would start every 5 s (40 % of the time building); with it every 2 + 4 × 2 = 10 s.
    expect(simulate(continuous, { buildMs: 2_000 }).builds.length).toBeGreaterThanOrEqual(11);
    expect(builds.length).toBeGreaterThanOrEqual(5);
    expect(builds.length).toBeLessThanOrEqual(6);
    for (let i = 1; i < builds.length; i++) expect((builds[i] as number) - (builds[i - 1] as number)).toBeGreaterThanOrEqual(10_000);
    // A quick build rests less than the maximum delay: the cadence stays every 5 s.
    const quick = simulate(continuous, { buildMs: 100, restFactor: 4 }).builds;
    expect(quick.length).toBeGreaterThanOrEqual(11);
    for (let i = 1; i < quick.length; i++) expect((quick[i] as number) - (quick[i - 1] as number)).toBeLessThan(5_100);
  });

  it('ends a rest with the change it held back: the last change of a burst is built once the rest is over', () => {
    const schedule = new FeedSchedule(1_000, 5_000, 4);
    schedule.consumed(['t/o'], end(0, 1), 0);
    schedule.started('t/o');
    schedule.finished('t/o', true, 3_000, 3_000); // rests until 15 s
    schedule.consumed(['t/o'], end(0, 2), 3_100);
    expect(schedule.due(14_990)).toEqual([]);
    expect(schedule.nextDueIn(10_000)).toBe(5_000);
    expect(schedule.due(15_000)).toEqual(['t/o']);
  });

  it('builds a feed a request waits for at once, first, and a build already running of it is not doubled', () => {
    const schedule = new FeedSchedule(1_000, 5_000);
    schedule.consumed(['a'], end(0, 1), 0);
    schedule.consumed(['b'], end(0, 2), 500, new Set(['b']));
    expect(schedule.due(500)).toEqual(['b']);
    expect(schedule.nextDueIn(500)).toBe(0);
    schedule.started('b');
    schedule.consumed(['b'], end(0, 3), 600, new Set(['b']));
    expect(schedule.due(600)).toEqual([]);
    expect(schedule.due(1_000)).toEqual(['a']);
  });

  it('debounces each tenant on its own', () => {
    const schedule = new FeedSchedule(1_000, 5_000);
    schedule.consumed(['a'], end(0, 1), 0);
    schedule.consumed(['b'], end(1, 1), 800);
    expect(schedule.due(999)).toEqual([]);
    expect(schedule.due(1_000)).toEqual(['a']);
    expect(schedule.nextDueIn(1_000)).toBe(0);
    schedule.started('a');
    expect(schedule.due(1_000)).toEqual([]);
    expect(schedule.nextDueIn(1_000)).toBe(800);
    expect(schedule.due(1_800)).toEqual(['b']);
  });

  it('never builds one tenant twice at once; changes during a build make another one after it', () => {
    const schedule = new FeedSchedule(1_000, 5_000);
    schedule.consumed(['a'], end(0, 1), 0);
    schedule.started('a');
    schedule.consumed(['a'], end(0, 2), 500);
    expect(schedule.due(2_000)).toEqual([]);
    schedule.finished('a', true, 2_000);
    expect(schedule.due(2_000)).toEqual(['a']);
  });

  it('commits an offset only once every tenant it dirtied has had a build started after it', () => {
    const schedule = new FeedSchedule(1_000, 5_000);
    schedule.consumed(['a'], end(0, 10), 0);
    schedule.consumed(['b'], end(1, 20), 0);
    schedule.consumed(['a'], end(0, 11), 0);
    expect(schedule.takeCommittable()).toEqual([]);
    schedule.started('a');
    expect(schedule.takeCommittable()).toEqual([]);
    schedule.finished('a', true, 10);
    // b, dirtied by the second batch, holds everything from it on.
    expect(schedule.takeCommittable()).toEqual([{ topic: 'products', partition: 0, offset: '11' }]);
    schedule.started('b');
    schedule.finished('b', true, 20);
    expect(schedule.takeCommittable()).toEqual([
      { topic: 'products', partition: 1, offset: '21' },
      { topic: 'products', partition: 0, offset: '12' },
    ]);
    expect(schedule.takeCommittable()).toEqual([]);
  });

  it('keeps the offsets of a failed build pending, and tries it again after a quiet period', () => {
    const schedule = new FeedSchedule(1_000, 5_000);
    schedule.consumed(['a'], end(0, 1), 0);
    schedule.started('a');
    schedule.finished('a', false, 1_500);
    expect(schedule.takeCommittable()).toEqual([]);
    expect(schedule.due(2_000)).toEqual([]);
    expect(schedule.due(2_500)).toEqual(['a']);
    schedule.started('a');
    schedule.finished('a', true, 2_600);
    expect(schedule.takeCommittable()).toEqual([{ topic: 'products', partition: 0, offset: '2' }]);
  });

  it('backs off a build that keeps failing (1 s doubling to 60 s) instead of retrying it at once, and forgets it on success', () => {
    const schedule = new FeedSchedule(1_000, 5_000);
    schedule.consumed(['a'], end(0, 1), 0);
    let now = 10_000; // long past the first change: without a backoff every failure would be due again at once
    const gaps: number[] = [];
    for (let failure = 0; failure < 8; failure++) {
      schedule.started('a');
      schedule.finished('a', false, now);
      const wait = schedule.nextDueIn(now) as number;
      expect(schedule.due(now + wait - 1)).toEqual([]);
      expect(schedule.due(now + wait)).toEqual(['a']);
      gaps.push(wait);
      now += wait;
    }
    expect(gaps).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
    schedule.started('a');
    schedule.finished('a', true, now);
    schedule.consumed(['a'], end(0, 2), now);
    expect(schedule.nextDueIn(now)).toBe(1_000); // the next change is debounced as usual, not backed off
  });
});
