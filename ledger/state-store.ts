import { randomUUID } from 'node:crypto';
import type { RememberedRequests } from './idempotency.ts';
import { fixedAssignment, inTransaction, type Kafka, type Producer } from './kafka.ts';

export type Owner = { tenantId: string; orgId: string };
/**
 * One aggregate's latest state in the compacted changelog, with the tenant that owns it and the retryable
 * requests it accepted lately (absent in snapshots written before there were any).
 */
export type Snapshot<S> = { owner: Owner | null; state: S; version: number; requests?: RememberedRequests };

const BARRIER_KEY = '__restore-barrier__';

/**
 * Marks the end of a partition of each state changelog, by a record the partition's own producer commits after it has
 * fenced the partition's previous owner (whose open transaction is thereby aborted): once a reader has reached the
 * barrier (read_committed), nothing written before it can still appear.
 */
export async function writeBarrier(producer: Producer, topics: string[], partition: number): Promise<Barrier> {
  const id = randomUUID();
  const value = JSON.stringify({ barrierId: id });
  const written = await inTransaction(producer, (transaction) =>
    transaction.sendBatch({
      acks: -1,
      topicMessages: topics.map((topic) => ({ topic, messages: [{ partition, key: BARRIER_KEY, value }] })),
    }),
  );
  return { id, offsets: new Map(written.map((w) => [w.topicName, BigInt(w.baseOffset ?? '-1')])) };
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
  groupPrefix: string,
  onRecord: (partition: number, key: string, value: Buffer | null, offset: string) => void,
  from: Map<number, string> = new Map(),
  cancelled?: AbortSignal,
): Promise<void> {
  const partitions = [...barriers.keys()];
  if (partitions.length === 0) return;
  const waiting = new Set(partitions);
  const groupId = `${groupPrefix}.${randomUUID()}`;
  const consumer = kafka.consumer({
    groupId,
    readUncommitted: false,
    maxWaitTimeInMs: 100,
    partitionAssigners: [fixedAssignment(topic, partitions)],
    // A crash ends the read (the part restarts and reads again): restarted by kafkajs it would be nobody's to watch.
    retry: { initialRetryTime: 100, retries: 5, restartOnFailure: async () => false },
  });
  const admin = kafka.admin();
  let onAbort: (() => void) | undefined;
  let running: Promise<void> | undefined;
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      // kafkajs reports a failed join or fetch as a crash event, not through run()'s promise.
      consumer.on(consumer.events.CRASH, ({ payload }) => reject(payload.error));
      onAbort = () => reject(cancelled?.reason);
      if (cancelled?.aborted) onAbort();
      cancelled?.addEventListener('abort', onAbort, { once: true });
      running = consumer
        .run({
          autoCommit: false,
          partitionsConsumedConcurrently: partitions.length,
          eachBatch: async ({ batch }) => {
            if (!waiting.has(batch.partition) || cancelled?.aborted) return;
            for (const message of batch.messages) {
              const key = message.key?.toString();
              if (!key) continue;
              if (key === BARRIER_KEY) {
                const { barrierId } = message.value ? (JSON.parse(message.value.toString()) as { barrierId: string }) : { barrierId: '' };
                if (barrierId === barriers.get(batch.partition)) {
                  waiting.delete(batch.partition);
                  break;
                }
              } else {
                onRecord(batch.partition, key, message.value, message.offset);
              }
            }
            if (waiting.size === 0) resolve();
          },
        })
        .catch(reject);
      for (const [partition, offset] of from) if (waiting.has(partition)) consumer.seek({ topic, partition, offset });
    });
  } finally {
    if (onAbort) cancelled?.removeEventListener('abort', onAbort);
    // A disconnect while kafkajs is still joining the group would leave its runner fetching, unreachable.
    await running;
    await consumer.disconnect().catch(() => undefined);
    await admin.connect().catch(() => undefined);
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
}
