import { describe, expect, it } from 'vitest';
import { chunkBySize, CommittedPositions, consumedOffsets, GroupCommit } from '../../ledger/group-commit.ts';

const deferred = () => {
  let release = () => {};
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
};

describe('group commit', () => {
  it('commits what arrives together as one group, and what arrives during a commit as the next', async () => {
    const groups: number[][] = [];
    const gate = deferred();
    const group = new GroupCommit<number>(async (items) => {
      groups.push(items);
      if (groups.length === 1) await gate.promise;
    });
    const first = [group.submit(1), group.submit(2)];
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    const second = [group.submit(3), group.submit(4), group.submit(5)];
    gate.release();
    await Promise.all([...first, ...second]);
    expect(groups).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
  });

  it('fails every item of a failed group, and goes on with the next', async () => {
    let calls = 0;
    const group = new GroupCommit<string>(async (items) => {
      calls += 1;
      if (items.includes('bad')) throw new Error('aborted');
    });
    const failed = Promise.allSettled([group.submit('ok'), group.submit('bad')]);
    expect((await failed).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await expect(group.submit('later')).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });
});

describe('consumed offsets', () => {
  const batch = (topic: string, partition: number, last: string) => ({ topic, partition, lastOffset: () => last });

  it('commits past the last message of each topic and partition, the highest when one appears twice', () => {
    expect(consumedOffsets([batch('a', 0, '4'), batch('a', 1, '9'), batch('b', 0, '0'), batch('a', 0, '7')])).toEqual([
      {
        topic: 'a',
        partitions: [
          { partition: 0, offset: '8' },
          { partition: 1, offset: '10' },
        ],
      },
      { topic: 'b', partitions: [{ partition: 0, offset: '1' }] },
    ]);
  });
});

describe('chunk by size', () => {
  it('keeps order and fills each run up to the limit; an item over the limit runs alone', () => {
    const identity = (n: number) => n;
    expect(chunkBySize([3, 4, 2, 5, 1], identity, 7)).toEqual([[3, 4], [2, 5], [1]]);
    expect(chunkBySize([2, 9, 2], identity, 7)).toEqual([[2], [9], [2]]);
    expect(chunkBySize([], identity, 7)).toEqual([]);
  });
});

describe('committed positions', () => {
  it('covers what an earlier round committed, per topic and partition, and never moves back', () => {
    const positions = new CommittedPositions();
    const consumed = (topic: string, partition: number, last: string) => ({ topic, partition, lastOffset: () => last });
    expect(positions.covers('a', 0, '0')).toBe(false);
    positions.advance([consumed('a', 0, '5'), consumed('a', 1, '2')]);
    expect(positions.covers('a', 0, '5')).toBe(true);
    expect(positions.covers('a', 0, '6')).toBe(false);
    expect(positions.covers('a', 1, '3')).toBe(false);
    expect(positions.covers('b', 0, '0')).toBe(false);
    positions.advance([consumed('a', 0, '3')]);
    expect(positions.covers('a', 0, '5')).toBe(true);
  });

  it('passes over what the group committed elsewhere (a previous owner), below the next offset only, never moving back', () => {
    const positions = new CommittedPositions();
    positions.passOver('a', 2, 10n);
    expect(positions.covers('a', 2, '9')).toBe(true);
    expect(positions.covers('a', 2, '10')).toBe(false);
    expect(positions.covers('a', 1, '0')).toBe(false);
    positions.passOver('a', 2, 4n);
    expect(positions.covers('a', 2, '9')).toBe(true);
    positions.advance([{ topic: 'a', partition: 2, lastOffset: () => '12' }]);
    expect(positions.covers('a', 2, '12')).toBe(true);
  });
});
