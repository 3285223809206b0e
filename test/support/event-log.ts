import { randomUUID } from 'node:crypto';
import { logEnds, quietKafka } from '../../ledger/kafka.ts';
import { inject } from 'vitest';
import { EventCodec } from '../../ledger/event-codec.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { namespaced, type TopicSpec } from '../../ledger/topics.ts';

/** Reads an events topic from offset 0 to its current end, as a downstream subscriber would (read_committed). */
export async function readEvents(namespace: string, topic: TopicSpec): Promise<RecordedEvent[]> {
  const stack = inject('stack');
  const kafka = quietKafka(stack.kafkaBrokers, 'test-reader');
  const codec = EventCodec.connect(stack.schemaRegistryUrl, namespace);
  const name = namespaced(namespace, topic.name);
  const admin = kafka.admin();
  await admin.connect();
  const ends = await logEnds(admin, name);
  await admin.disconnect();
  const events: RecordedEvent[] = [];
  const pending = new Set([...ends].filter(([, high]) => high > 0n).map(([partition]) => partition));
  if (pending.size === 0) return events;
  const consumer = kafka.consumer({ groupId: `test-reader-${randomUUID()}`, readUncommitted: false, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: name, fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    const done = (partition: number, offset: string) => {
      if (BigInt(offset) + 1n >= (ends.get(partition) ?? 0n)) pending.delete(partition);
      if (pending.size === 0) resolve();
    };
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => done(payload.partition, payload.lastOffset));
    consumer
      .run({
        eachBatch: async ({ batch }) => {
          for (const message of batch.messages) {
            if (message.value)
              events.push(await codec.decode(message.value, { topic: name, partition: batch.partition, offset: message.offset }));
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  return events;
}
