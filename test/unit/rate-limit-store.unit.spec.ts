import { describe, expect, it } from 'vitest';
import { CostWindows } from '../../http/rate-limit-store.ts';

const WINDOW = 1_000;

const clock = () => {
  let now = 0;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
};

describe('CostWindows', () => {
  it('admits charges while budget is left, refuses the rest for free, and starts again with the next window', () => {
    const time = clock();
    const store = new CostWindows(time.now);
    expect(store.charge('a', 1, WINDOW, 2)).toEqual({ current: 1, ttl: WINDOW });
    time.advance(100);
    expect(store.charge('a', 1, WINDOW, 2)).toEqual({ current: 2, ttl: 900 });
    for (let i = 0; i < 5; i++) expect(store.charge('a', 1, WINDOW, 2)).toEqual({ current: 3, ttl: 900 });
    expect(store.charge('b', 1, WINDOW, 2).current).toBe(1);
    time.advance(900);
    expect(store.charge('a', 1, WINDOW, 2)).toEqual({ current: 1, ttl: WINDOW });
  });

  it('takes a charge larger than what is left, and the windows after it pay for it', () => {
    const time = clock();
    const store = new CostWindows(time.now);
    expect(store.charge('a', 25, WINDOW, 10)).toEqual({ current: 10, ttl: WINDOW });
    // 25 of 10 a window: this window and the next pay 20 of it; the one after starts owing 5 and admits again.
    expect(store.charge('a', 1, WINDOW, 10)).toEqual({ current: 11, ttl: 2 * WINDOW });
    time.advance(2 * WINDOW);
    expect(store.charge('a', 1, WINDOW, 10)).toEqual({ current: 6, ttl: WINDOW });
  });

  it('reads without charging', () => {
    const store = new CostWindows(() => 0);
    store.charge('a', 3, WINDOW, 10);
    let read: unknown;
    store.read('a', (_error, result) => (read = result), WINDOW, 10);
    expect(read).toEqual({ current: 3, ttl: WINDOW });
    expect(store.charge('a', 1, WINDOW, 10).current).toBe(4);
  });
});
