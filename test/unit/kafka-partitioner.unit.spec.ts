import { describe, expect, it } from 'vitest';
import { partitionOfKey } from '../../ledger/kafka.ts';

/**
 * murmur2 of these keys as the Java client computes it (Kafka's own `UtilsTest.testMurmur2`). Every record of an aggregate
 * must land where the earlier ones did, whichever client wrote them: a client whose placement differs (an unsigned hash
 * instead of `toPositive`, say) splits an aggregate over two partitions and so over two writers.
 */
const JAVA_MURMUR2: [string, number][] = [
  ['21', -973932308],
  ['foobar', -790332482],
  ['a-little-bit-long-string', -985981536],
  ['a-little-bit-longer-string', -1486304829],
  ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
  ['abc', 479470107],
];

describe('the partition of a keyed record', () => {
  it("is the Java client's: toPositive(murmur2(key)) modulo the partitions, for every partition count the service allows", () => {
    for (const [key, hash] of JAVA_MURMUR2) {
      for (let partitions = 1; partitions <= 64; partitions++) {
        expect({ key, partitions, partition: partitionOfKey(key, partitions) }).toEqual({
          key,
          partitions,
          partition: (hash & 0x7fffffff) % partitions,
        });
      }
    }
  });
});
