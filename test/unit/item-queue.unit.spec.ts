import { describe, expect, it } from 'vitest';
import { ItemQueue } from '../../ledger/item-queue.ts';
import { createLogger } from '../../ledger/logger.ts';
import { ThrottledLog } from '../../ledger/throttled-log.ts';
import type { WorkerContext } from '../../ledger/worker.ts';

type Job = { id: string; tenant: string };

const context = (): WorkerContext => {
  const log = createLogger('silent');
  return {
    deps: undefined as unknown as WorkerContext['deps'],
    log,
    throttled: new ThrottledLog(log),
    wake: () => undefined,
    stopping: () => false,
    commit: async () => undefined,
  };
};

/** A queue whose items stay in hand until the test ends them; `started` lists them as they were taken. */
function heldQueue(atOnce: number, listed: () => Job[]) {
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  const queue = new ItemQueue<Job>(context(), 'test', atOnce, {
    queue: async () => listed(),
    keyOf: (job) => job.id,
    ownerOf: (job) => job.tenant,
    work: (job) =>
      new Promise<boolean>((resolve) => {
        started.push(job.id);
        finish.set(job.id, () => resolve(true));
      }),
  });
  return { queue, started, end: (id: string) => finish.get(id)?.() };
}

const jobs = (tenant: string, count: number): Job[] => Array.from({ length: count }, (_, i) => ({ id: `${tenant}${i + 1}`, tenant }));

describe('ItemQueue with owners', () => {
  it('never gives one owner every slot, so another owner’s item starts in the next round', async () => {
    let listed = jobs('a', 10);
    const { queue, started } = heldQueue(4, () => listed);
    await queue.round();
    expect(started).toEqual(['a1', 'a2', 'a3']);
    listed = [...jobs('a', 10), ...jobs('b', 1)];
    await queue.round();
    expect(started).toEqual(['a1', 'a2', 'a3', 'b1']);
  });

  it('takes round-robin across owners, the one with fewest in hand first', async () => {
    const listed = [...jobs('a', 5), ...jobs('b', 5), ...jobs('c', 1)];
    const { queue, started, end } = heldQueue(4, () => listed);
    await queue.round();
    expect(started).toEqual(['a1', 'b1', 'c1', 'a2']);
    end('c1');
    await new Promise((resolve) => setImmediate(resolve));
    await queue.round();
    expect(started.at(-1)).toBe('b2');
  });

  it('takes in listed order without owners', async () => {
    const started: string[] = [];
    const queue = new ItemQueue<Job>(context(), 'test', 2, {
      queue: async () => jobs('a', 3),
      keyOf: (job) => job.id,
      work: (job) => new Promise<boolean>(() => void started.push(job.id)),
    });
    await queue.round();
    expect(started).toEqual(['a1', 'a2']);
  });
});
