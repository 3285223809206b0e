/** Where a consumed batch ends: the offset of its last message. */
export type ConsumedEnd = { topic: string; partition: number; lastOffset: string };
export type OffsetToCommit = { topic: string; partition: number; offset: string };

/** `retryAt`: after a failed build, not before this (backing off 1 s doubling to 60 s). */
type Dirty = { firstAt: number; lastAt: number; firstSeq: number; retryAt?: number };

const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 60_000;
type Building = { firstSeq: number; firstAt: number };

/**
 * When to build whose feed, and which consumed offsets may be committed (pure: the caller gives the time).
 *
 * Debounce per tenant and org: a feed is built once its changes have been quiet for `quietMs`, or `maxDelayMs` after
 * the first change not yet built, whichever comes first; never twice at once. So a burst builds it once after the
 * burst, continuous changes about every `maxDelayMs`. After a build the feed rests `restFactor` times that build's own
 * work before the next one: a large catalog changing without pause is rebuilt less often than every `maxDelayMs`, so its
 * builds take at most 1 / (1 + restFactor) of the time.
 *
 * Offsets: every consumed batch gets a sequence number. An offset is committed only once every tenant dirtied at or
 * before it has had a build that started after it (the build waits for the read models to reach what was consumed
 * first), so a crash anywhere re-reads what some feed may not reflect yet, and builds again.
 */
export class FeedSchedule {
  private seq = 0;
  private readonly dirty = new Map<string, Dirty>();
  private readonly building = new Map<string, Building>();
  /** Builds of a key that failed in a row. */
  private readonly failures = new Map<string, number>();
  private readonly ends: (OffsetToCommit & { seq: number })[] = [];
  /** Each feed's rest after its last build: no build before this. */
  private readonly restsUntil = new Map<string, number>();

  private readonly quietMs: number;
  private readonly maxDelayMs: number;
  private readonly restFactor: number;

  constructor(quietMs: number, maxDelayMs: number, restFactor = 0) {
    this.quietMs = quietMs;
    this.maxDelayMs = maxDelayMs;
    this.restFactor = restFactor;
  }

  /**
   * A consumed batch: the tenants and orgs (keys) its events touch, and where it ends. `awaited`: keys whose first feed
   * a request is waiting for, built at once (as if their maximum delay had passed).
   */
  consumed(keys: Iterable<string>, end: ConsumedEnd, now: number, awaited: ReadonlySet<string> = new Set()): void {
    this.seq += 1;
    for (const key of keys) this.mark(key, now, this.seq, awaited.has(key));
    this.ends.push({ seq: this.seq, topic: end.topic, partition: end.partition, offset: (BigInt(end.lastOffset) + 1n).toString() });
  }

  /** The keys whose build is due now, oldest change first. */
  due(now: number): string[] {
    for (const [key, until] of this.restsUntil) if (until <= now) this.restsUntil.delete(key);
    return [...this.dirty.entries()]
      .filter(
        ([key, d]) =>
          !this.building.has(key) &&
          now >= this.notBefore(key, d) &&
          (now - d.lastAt >= this.quietMs || now - d.firstAt >= this.maxDelayMs),
      )
      .sort(([, a], [, b]) => a.firstAt - b.firstAt)
      .map(([key]) => key);
  }

  /** Milliseconds until the next build falls due (undefined: nothing is waiting). */
  nextDueIn(now: number): number | undefined {
    let next: number | undefined;
    for (const [key, d] of this.dirty) {
      if (this.building.has(key)) continue;
      const at = Math.max(Math.min(d.lastAt + this.quietMs, d.firstAt + this.maxDelayMs), this.notBefore(key, d));
      next = Math.min(next ?? Infinity, Math.max(0, at - now));
    }
    return next;
  }

  /** A build of `key` starts: it covers every change consumed so far. */
  started(key: string): void {
    const dirty = this.dirty.get(key);
    if (!dirty) return;
    this.dirty.delete(key);
    this.building.set(key, { firstSeq: dirty.firstSeq, firstAt: dirty.firstAt });
  }

  /**
   * A build of `key` ended; a failed one leaves its changes pending, tried again after a backoff. `workMs`: what the
   * build itself took (reading and publishing, not its wait for the read models), which sets the feed's rest.
   */
  finished(key: string, succeeded: boolean, now: number, workMs = 0): void {
    const build = this.building.get(key);
    if (!build) return;
    this.building.delete(key);
    if (succeeded) {
      this.failures.delete(key);
      if (this.restFactor > 0 && workMs > 0) this.restsUntil.set(key, now + workMs * this.restFactor);
      else this.restsUntil.delete(key);
      return;
    }
    const failed = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, failed);
    const retryAt = now + Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (failed - 1));
    const later = this.dirty.get(key);
    this.dirty.set(key, { firstAt: build.firstAt, lastAt: now, firstSeq: Math.min(build.firstSeq, later?.firstSeq ?? Infinity), retryAt });
  }

  isBuilding(): boolean {
    return this.building.size > 0;
  }

  /** The offsets every feed now reflects, at most one per partition, taken (each is given once). */
  takeCommittable(): OffsetToCommit[] {
    let pending = Infinity;
    for (const d of this.dirty.values()) pending = Math.min(pending, d.firstSeq);
    for (const b of this.building.values()) pending = Math.min(pending, b.firstSeq);
    const latest = new Map<string, OffsetToCommit>();
    while (this.ends.length > 0 && (this.ends[0]?.seq ?? Infinity) < pending) {
      const { seq: _seq, ...end } = this.ends.shift() as OffsetToCommit & { seq: number };
      latest.set(`${end.topic}|${end.partition}`, end);
    }
    return [...latest.values()];
  }

  /** When a dirty feed may be built at the earliest: past its rest and any retry backoff. */
  private notBefore(key: string, d: Dirty): number {
    return Math.max(d.retryAt ?? 0, this.restsUntil.get(key) ?? 0);
  }

  private mark(key: string, now: number, seq: number, awaited: boolean): void {
    const firstAt = awaited ? now - this.maxDelayMs : now;
    const dirty = this.dirty.get(key);
    if (dirty) {
      dirty.lastAt = now;
      dirty.firstAt = Math.min(dirty.firstAt, firstAt);
    } else this.dirty.set(key, { firstAt, lastAt: now, firstSeq: seq });
  }
}
