import { describe, expect, it } from 'vitest';
import { ExpiringCache } from '../../ledger/expiring-cache.ts';

/** A loader that answers `<key>#<n>` for its n-th load, when `release` is called (loads can be held in flight). */
function loader() {
  const pending: (() => void)[] = [];
  let loads = 0;
  const load = (key: string) => {
    loads++;
    const answer = `${key}#${loads}`;
    return new Promise<string>((resolve) => pending.push(() => resolve(answer)));
  };
  return { load, loads: () => loads, release: () => pending.splice(0).forEach((resolve) => resolve()) };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('an expiring cache', () => {
  it('loads a key once for every concurrent get and keeps the answer until it is ttlMs old', async () => {
    let now = 1_000;
    const source = loader();
    const cache = new ExpiringCache(source.load, { ttlMs: 100, entries: 10 }, () => now);
    const first = [cache.get('a'), cache.get('a')];
    source.release();
    expect(await Promise.all(first)).toEqual(['a#1', 'a#1']);
    now += 99;
    expect(await cache.get('a')).toBe('a#1');
    now += 1;
    const reloaded = cache.get('a');
    source.release();
    expect(await reloaded).toBe('a#2');
    expect(source.loads()).toBe(2);
  });

  it('forgets everything at once, and a load in flight when it forgot stores nothing', async () => {
    const source = loader();
    const cache = new ExpiringCache(source.load, { ttlMs: 60_000, entries: 10 });
    const kept = cache.get('a');
    source.release();
    expect(await kept).toBe('a#1');
    const inFlight = cache.get('b');
    cache.forget();
    // A get after the forgetting does not join the load that began before it.
    const after = cache.get('b');
    source.release();
    expect(await inFlight).toBe('b#2');
    expect(await after).toBe('b#3');
    const again = cache.get('a');
    source.release();
    expect(await again).toBe('a#4');
    expect(await cache.get('b')).toBe('b#3');
    expect(source.loads()).toBe(4);
  });

  it('keeps at most `entries` keys, and does not keep a failed load', async () => {
    let fail = true;
    let loads = 0;
    const cache = new ExpiringCache(
      async (key) => {
        loads++;
        if (fail) throw new Error(`no ${key}`);
        return key;
      },
      { ttlMs: 60_000, entries: 2 },
    );
    await expect(cache.get('a')).rejects.toThrow('no a');
    await settle();
    fail = false;
    expect(await cache.get('a')).toBe('a');
    await cache.get('b');
    await cache.get('c');
    expect(loads).toBe(4);
    await cache.get('c');
    await cache.get('b');
    expect(loads).toBe(4);
    await cache.get('a');
    expect(loads).toBe(5);
  });
});
