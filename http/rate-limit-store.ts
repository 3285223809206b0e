import type { FastifyRateLimitStore } from '@fastify/rate-limit';

type Window = { used: number; startMs: number; windowMs: number; max: number };
type Counted = { current: number; ttl: number };

/** Windows kept before the expired ones are swept (a flood of source addresses must not grow the map without end). */
const SWEEP_AT = 50_000;

/**
 * The rate limiter's store: a fixed window per key, as @fastify/rate-limit's own, except that a charge may cost more
 * than one (a bulk job's items) and what a charge took beyond the budget is owed to the windows after it. A charge is
 * admitted while the key has budget left, so a job larger than what remains still goes; the next windows pay for it.
 * Refused charges cost nothing: a client that keeps trying is not locked out longer for it.
 */
export class CostWindows implements FastifyRateLimitStore {
  private readonly windows = new Map<string, Window>();

  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** Charges `cost` to `key` when it has budget left; `current` above `max` means refused, `ttl` is when it may go. */
  charge(key: string, cost: number, windowMs: number, max: number): Counted {
    const now = this.now();
    const window = this.current(key, windowMs, max, now);
    if (window.used >= max) return { current: max + 1, ttl: untilFree(window, now) };
    window.used += cost;
    this.windows.set(key, window);
    return { current: Math.min(window.used, max), ttl: window.startMs + windowMs - now };
  }

  incr(key: string, callback: (error: Error | null, result?: Counted) => void, windowMs: number, max: number): void {
    callback(null, this.charge(key, 1, windowMs, max));
  }

  read(key: string, callback: (error: Error | null, result?: Counted) => void, windowMs: number, max: number): void {
    const now = this.now();
    const window = this.current(key, windowMs, max, now);
    callback(null, { current: window.used, ttl: window.used === 0 ? 0 : untilFree(window, now) });
  }

  /** Every limiter shares this store: their keys name their budget. */
  child(): FastifyRateLimitStore {
    return this;
  }

  /** The key's window as of `now`. */
  private current(key: string, windowMs: number, max: number, now: number): Window {
    if (this.windows.size > SWEEP_AT) this.sweep(now);
    const window = this.windows.get(key);
    return window ? rolled(window, now) : { used: 0, startMs: now, windowMs, max };
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (rolled(window, now).used === 0) this.windows.delete(key);
  }
}

/** When the window's key has budget again: at its end, or, while it owes more, at the end of the window that pays the rest. */
function untilFree({ used, startMs, windowMs, max }: Window, now: number): number {
  return startMs + Math.max(1, Math.floor(used / max)) * windowMs - now;
}

/** A window as of `now`: each window gone by paid `max` of what was owed. */
function rolled(window: Window, now: number): Window {
  const { used, startMs, windowMs, max } = window;
  if (now < startMs + windowMs) return window;
  const passed = Math.floor((now - startMs) / windowMs);
  return { used: Math.max(0, used - passed * max), startMs: startMs + passed * windowMs, windowMs, max };
}
