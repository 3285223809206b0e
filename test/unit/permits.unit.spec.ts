import { describe, expect, it } from 'vitest';
import { Permits } from '../../ledger/permits.ts';

const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('Permits', () => {
  it('hands out no more than its size, and a release lets the longest waiting go first', async () => {
    const permits = new Permits(2);
    const order: string[] = [];
    await permits.take();
    expect(permits.tryTake()).toBe(true);
    expect(permits.tryTake()).toBe(false);
    const first = permits.take().then(() => order.push('first'));
    const second = permits.take().then(() => order.push('second'));
    await settled();
    expect(order).toEqual([]);
    permits.release();
    await first;
    expect(order).toEqual(['first']);
    permits.release();
    await second;
    expect(order).toEqual(['first', 'second']);
    expect(permits.available).toBe(0);
  });

  it('gives several back at once, to the waiters first, and takes none when none is free', async () => {
    const permits = new Permits(3);
    for (let i = 0; i < 3; i++) expect(permits.tryTake()).toBe(true);
    let waited = false;
    const waiting = permits.take().then(() => (waited = true));
    permits.release(2);
    await waiting;
    expect(waited).toBe(true);
    // One of the two went to the waiter; the other is free and no one waits, so tryTake may have it.
    expect(permits.available).toBe(1);
    expect(permits.tryTake()).toBe(true);
    const late = permits.take();
    permits.release();
    await late;
    expect(permits.tryTake()).toBe(false);
  });
});
