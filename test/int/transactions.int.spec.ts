import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  ensureTopics,
  inTransaction,
  isTransientTransactionError,
  retryTransient,
  transactionalProducer,
  quietKafka,
  type Kafka,
  type Admin,
  type Producer,
} from '../../ledger/kafka.ts';
import { topic as topicSpec } from '../../ledger/topics.ts';

/**
 * The coordinator answers CONCURRENT_TRANSACTIONS to a transaction whose first step is AddOffsetsToTxn while the
 * previous commit's markers are still being written (an offsets-only round of a router does exactly that), and
 * kafkajs does not retry AddOffsetsToTxn: a consumer crashed on it under ordinary load.
 */
describe('transactions on the real broker', () => {
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  const topic = `int-transactions-${randomUUID()}`;

  beforeAll(async () => {
    kafka = quietKafka(inject('stack').kafkaBrokers, 'int-transactions');
    admin = kafka.admin();
    await admin.connect();
    // ensureTopics rides out KRaft answering the leader check before the new topic's metadata has spread.
    await ensureTopics(admin, '', [topicSpec(topic, 'events', 'key')], 3, 1_000_000);
    producer = transactionalProducer(kafka, `int-transactions-${randomUUID()}`);
    await producer.connect();
  });

  afterAll(async () => {
    await producer?.disconnect();
    await admin?.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin?.disconnect();
  });

  /** One round as a router commits it: the consumed offsets first, then records to every partition. */
  const round = (index: number, sendOffsets: (step: () => Promise<void>) => Promise<void>) =>
    inTransaction(producer, async (transaction) => {
      await sendOffsets(() =>
        transaction.sendOffsets({
          consumerGroupId: `int-transactions-group`,
          topics: [{ topic, partitions: [{ partition: 0, offset: String(index) }] }],
        }),
      );
      await transaction.sendBatch({
        topicMessages: [{ topic, messages: [0, 1, 2].map((partition) => ({ partition, key: String(index), value: 'x' })) }],
      });
    });

  it('reproduces CONCURRENT_TRANSACTIONS on sendOffsets when it is not retried', async () => {
    let seen: unknown;
    for (let index = 0; index < 500 && seen === undefined; index++) {
      await round(index, (step) => step()).catch((error: unknown) => {
        seen = error;
      });
    }
    expect(seen, 'the race never happened in 500 back-to-back transactions').toBeDefined();
    expect(isTransientTransactionError(seen)).toBe(true);
  });

  it('survives it by retrying the step in place: no round fails', async () => {
    let retries = 0;
    const failures: unknown[] = [];
    for (let index = 0; index < 300; index++) {
      await round(index, (step) => retryTransient(step, () => retries++)).catch((error: unknown) => failures.push(error));
    }
    expect(failures).toEqual([]);
    expect(retries).toBeGreaterThan(0);
  });
});
