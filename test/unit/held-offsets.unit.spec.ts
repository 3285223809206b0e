import { describe, expect, it } from 'vitest';
import { HeldOffsets } from '../../ledger/event-router.ts';
import { consumedOffsets } from '../../ledger/group-commit.ts';

const consumed = (partition: number, offset: string) => ({ topic: 't', partition, lastOffset: () => offset });

describe('HeldOffsets (rounds of a router that wrote nothing)', () => {
  it('holds offsets until a round commits, which takes them all', () => {
    const held = new HeldOffsets(1_000);
    held.hold([consumed(0, '4'), consumed(1, '7')], 0);
    held.hold([consumed(0, '5')], 10);
    expect(consumedOffsets(held.take())).toEqual([
      {
        topic: 't',
        partitions: [
          { partition: 0, offset: '6' },
          { partition: 1, offset: '8' },
        ],
      },
    ]);
    expect(held.take()).toEqual([]);
  });

  it('is due once the oldest held offsets have waited the bound, so an idle-output stream still commits once in a while', () => {
    const held = new HeldOffsets(1_000);
    expect(held.due(5_000)).toBe(false);
    held.hold([consumed(0, '1')], 100);
    held.hold([consumed(0, '2')], 900);
    expect(held.due(1_099)).toBe(false);
    expect(held.due(1_100)).toBe(true);
    held.take();
    expect(held.due(10_000)).toBe(false);
  });
});
