import { expect } from 'vitest';
import { firstOf, tally, type Answer, type OutageTimeline } from './private-outage.ts';

type Health = { ready: Answer[]; live: Answer[] };

/** The first readiness probe after the dependency's return that answered 200 ready. */
export const readyAgain = (health: Health, timeline: OutageTimeline): Answer | undefined =>
  health.ready.find((p) => timeline.after(p) && p.status === 200 && p.body?.status === 'ready');

/** Every request sent while the dependency was down got its answer within `fastMs`. */
export function expectAnsweredWithin(requests: Answer[], timeline: OutageTimeline, fastMs: number, what: string): void {
  const slow = requests.filter((r) => timeline.during(r) && r.answeredAt - r.sentAt >= fastMs);
  expect(firstOf(slow.map(timeline.show)), `${slow.length} ${what} during the outage answered after ${fastMs} ms or not at all`).toEqual(
    [],
  );
}

/**
 * Ready before the stop; not ready, naming `dependency`, from `noticeMs` after the stop until the restart; ready again
 * within `healWithinMs` of the return.
 */
export function expectReadinessThrough(
  health: Health,
  timeline: OutageTimeline,
  dependency: string,
  { noticeMs, healWithinMs }: { noticeMs: number; healWithinMs: number },
): void {
  const before = health.ready.filter((p) => p.answeredAt < timeline.stopping).at(-1);
  expect.soft(before?.status, `the last readiness probe before the stop: ${before && timeline.show(before)}`).toBe(200);
  const down = health.ready.filter((p) => p.sentAt >= timeline.stopped + noticeMs && p.sentAt < timeline.starting);
  expect.soft(down.length, 'readiness probes during the outage').toBeGreaterThanOrEqual(10);
  const wrong = down.filter((p) => !(p.status === 503 && p.body?.status === 'not_ready' && p.body?.failing?.includes(dependency)));
  expect
    .soft(
      firstOf(wrong.map((p) => `${timeline.show(p)} ${JSON.stringify(p.body)?.slice(0, 300)}`)),
      `${wrong.length} of ${down.length} readiness probes during the outage not 503 not_ready failing ${dependency}`,
    )
    .toEqual([]);
  const again = readyAgain(health, timeline);
  const last = health.ready.at(-1);
  expect
    .soft(
      again ? again.answeredAt - timeline.back : Infinity,
      `ms from the return to 200 ready; last probe: ${last && `${timeline.show(last)} ${JSON.stringify(last.body)}`}`,
    )
    .toBeLessThanOrEqual(healWithinMs);
}

/** `/health/live` answered 200 in every probe, throughout. */
export function expectAlwaysLive(health: Health, timeline: OutageTimeline): void {
  expect(health.live.length).toBeGreaterThan(20);
  const down = health.live.filter((p) => p.status !== 200);
  expect(
    firstOf(down.map(timeline.show)),
    `${down.length} of ${health.live.length} liveness probes not answered 200; ${tally(down)}`,
  ).toEqual([]);
}
