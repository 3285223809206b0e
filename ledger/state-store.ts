import { randomUUID } from 'node:crypto';
import type { RememberedRequests } from './idempotency.ts';
import { inTransaction, readPartitions, type Kafka, type TransactionalProducer } from './kafka.ts';

export type Owner = { tenantId: string; orgId: string };
/**
 * One aggregate's latest state in the compacted changelog, with the tenant that owns it and the retryable
 * requests it accepted lately (absent in snapshots written before there were any).
 */
export type Snapshot<S> = { owner: Owner | null; state: S; version: number; requests?: RememberedRequests };

const BARRIER_KEY = '__restore-barrier__';

/**
 * Marks the end of partitions of each state changelog, by records the instance's producer commits in one transaction
 * once the group has assigned it the partitions: once a reader has reached a partition's barrier (read_committed),
 * nothing written before it can still appear (the previous owner's last transaction is complete: its generation ended
 * before this assignment began, and a transaction still open holds read_committed readers back until it ends).
 */
export async function writeBarriers(
  producer: TransactionalProducer,
  topics: string[],
  partitions: number[],
): Promise<Map<number, Barrier>> {
  const ids = new Map(partitions.map((partition) => [partition, randomUUID()]));
  const written = await inTransaction(producer, (transaction) =>
    transaction.sendBatch({
      topicMessages: topics.map((topic) => ({
        topic,
        messages: partitions.map((partition) => ({
          partition,
          key: BARRIER_KEY,
          value: JSON.stringify({ barrierId: ids.get(partition) }),
        })),
      })),
    }),
  );
  return new Map(
    partitions.map((partition) => [
      partition,
      {
        id: ids.get(partition) ?? '',
        offsets: new Map(written.filter((w) => w.partition === partition).map((w) => [w.topicName, BigInt(w.baseOffset ?? '-1')])),
      },
    ]),
  );
}

/** A partition's barrier: its id and its offset in each state changelog. */
export type Barrier = { id: string; offsets: Map<string, bigint> };

/**
 * Reads the given partitions of a compacted state changelog up to their barriers (`barriers`: partition → barrier id),
 * from the beginning or from `from` (partition → offset).
 */
export async function readSnapshots(
  kafka: Kafka,
  topic: string,
  barriers: Map<number, string>,
  onRecord: (partition: number, key: string, value: Buffer | null, offset: string) => void,
  from: Map<number, string> = new Map(),
  cancelled?: AbortSignal,
): Promise<void> {
  const starts = new Map([...barriers.keys()].map((partition) => [partition, BigInt(from.get(partition) ?? '0')]));
  await readPartitions(
    kafka,
    topic,
    starts,
    (batch) => {
      if (cancelled?.aborted) return true;
      for (const message of batch.messages) {
        const key = message.key?.toString();
        if (!key) continue;
        if (key === BARRIER_KEY) {
          const { barrierId } = message.value ? (JSON.parse(message.value.toString()) as { barrierId: string }) : { barrierId: '' };
          if (barrierId === barriers.get(batch.partition)) return true;
        } else {
          onRecord(batch.partition, key, message.value, message.offset);
        }
      }
      return false;
    },
    cancelled,
  );
}
