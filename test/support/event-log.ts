import { inject } from 'vitest';
import { EventCodec } from '../../ledger/event-codec.ts';
import { quietKafka, readToEnd, type FetchedBatch } from '../../ledger/kafka.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { namespaced, type TopicSpec } from '../../ledger/topics.ts';

/** Reads an events topic from offset 0 to its current end, as a downstream subscriber would (read_committed). */
export async function readEvents(namespace: string, topic: TopicSpec): Promise<RecordedEvent[]> {
  const stack = inject('stack');
  const codec = EventCodec.connect(stack.schemaRegistryUrl, namespace);
  const name = namespaced(namespace, topic.name);
  const batches: FetchedBatch[] = [];
  await readToEnd(quietKafka(stack.kafkaBrokers, 'test-reader'), name, (batch) => batches.push(batch));
  const events: RecordedEvent[] = [];
  for (const batch of batches) {
    for (const message of batch.messages) {
      if (message.value)
        events.push(await codec.decode(message.value, { topic: name, partition: batch.partition, offset: message.offset }));
    }
  }
  return events;
}
