import { randomUUID } from 'node:crypto';
import type { Kafka, Producer } from 'kafkajs';
import type { RememberedRequests } from './idempotency.ts';
import { inTransaction } from './kafka.ts';

export type Owner = { tenantId: string; orgId: string };
/**
 * One aggregate's latest state in the compacted changelog, with the tenant that owns it and the retryable
 * requests it accepted lately (absent in snapshots written before there were any).
 */
export type Snapshot<S> = { owner: Owner | null; state: S; version: number; requests?: RememberedRequests };

const BARRIER_KEY = '__restore-barrier__';

/**
 * Reads a compacted state changelog to its end. The end is marked by a barrier record that we
 * commit ourselves after the producer fenced any earlier incarnation: once the barrier of every
 * partition has been read (read_committed), nothing written before it can still appear.
 */
export async function restoreSnapshots<S>(
  kafka: Kafka,
  producer: Producer,
  topic: string,
  groupPrefix: string,
): Promise<Map<string, Snapshot<S>>> {
  const barrierId = randomUUID();
  const admin = kafka.admin();
  await admin.connect();
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
  const partitions = metadata.topics[0]?.partitions.map((p) => p.partitionId) ?? [];

  await inTransaction(producer, (transaction) =>
    transaction.send({
      topic,
      acks: -1,
      messages: partitions.map((partition) => ({ partition, key: BARRIER_KEY, value: JSON.stringify({ barrierId }) })),
    }),
  );

  const snapshots = new Map<string, Snapshot<S>>();
  const waiting = new Set(partitions);
  const groupId = `${groupPrefix}.${barrierId}`;
  const consumer = kafka.consumer({ groupId, readUncommitted: false, maxWaitTimeInMs: 100 });
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            for (const message of batch.messages) {
              const key = message.key?.toString();
              if (!key) continue;
              if (key === BARRIER_KEY) {
                if (message.value && (JSON.parse(message.value.toString()) as { barrierId: string }).barrierId === barrierId) {
                  waiting.delete(batch.partition);
                }
              } else if (message.value) {
                snapshots.set(key, JSON.parse(message.value.toString()) as Snapshot<S>);
              } else {
                snapshots.delete(key);
              }
            }
            if (waiting.size === 0) resolve();
          },
        })
        .catch(reject);
      if (waiting.size === 0) resolve();
    });
  } finally {
    await consumer.disconnect();
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
  return snapshots;
}
