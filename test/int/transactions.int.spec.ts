import { randomUUID } from 'node:crypto';
import { channel } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  ensureTopics,
  GroupConsumer,
  inTransaction,
  isBrokerAway,
  kafkaErrorType,
  logEnds,
  partitionOfKey,
  quietKafka,
  readToEnd,
  retryKafka,
  retryTransient,
  TransactionAborted,
  transactionalProducer,
  type Admin,
  type GroupMember,
  type Kafka,
  type TransactionalProducer,
} from '../../ledger/kafka.ts';
import { isGenerationMoved } from '../../ledger/partition-tasks.ts';
import { sleep } from '../../ledger/sleep.ts';
import { topic as topicSpec } from '../../ledger/topics.ts';
import { startPrivateKafka, type PrivateKafka } from '../support/private-kafka.ts';

/** The error a promise rejects with; undefined when it resolves. */
const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

/** What a producer's client knows of the cluster: its coordinator and its cached brokers (only the port imports the client). */
type CachedView = { coordinatorId?: number; currentMetadata?: { brokers: Map<number, unknown> } };

/** A transaction answered as aborted because of `cause`. */
const expectAbortedBy = (failed: unknown, cause: Error): void => {
  expect(failed).toBeInstanceOf(TransactionAborted);
  expect((failed as TransactionAborted).cause).toBe(cause);
};

/** Transactions of the port on the real broker: KIP-447 offset commits, and what a read_committed reader sees. */
describe('transactions on the real broker', () => {
  let kafka: Kafka;
  let admin: Admin;
  let producer: TransactionalProducer;
  const topic = `int-transactions-${randomUUID()}`;
  const consumers: GroupConsumer[] = [];

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
    for (const consumer of consumers) await consumer.stop();
    await producer?.disconnect();
    await admin?.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin?.disconnect();
  });

  /** A member of `groupId` that reads nothing of its own (its batches are left alone), with its latest assignment. */
  const member = async (groupId: string, instanceId: string) => {
    const joins: GroupMember[] = [];
    const consumer = new GroupConsumer(kafka, {
      groupId,
      topics: [topic],
      instanceId,
      onAssignment: (_assignment, joined) => joins.push(joined),
      eachBatch: async () => undefined,
      onFailure: () => undefined,
    });
    consumers.push(consumer);
    await consumer.start();
    return { consumer, joins };
  };

  const commitAs = (as: GroupMember, offset: number) =>
    inTransaction(producer, async (transaction) => {
      await transaction.sendBatch({ topicMessages: [{ topic, messages: [{ partition: 0, key: 'k', value: String(offset) }] }] });
      await transaction.sendOffsets({ member: as, topics: [{ topic, partitions: [{ partition: 0, offset: String(offset) }] }] });
    });

  it('commits offsets as the group member; a member the group has moved on from is refused (KIP-447)', async () => {
    const groupId = `int-transactions-kip447-${randomUUID()}`;
    const first = await member(groupId, 'first');
    const before = first.consumer.member();
    await commitAs(before, 5);
    expect(await admin.fetchOffsets({ groupId, topics: [topic], stable: true })).toContainEqual({
      topic,
      partitions: expect.arrayContaining([{ partition: 0, offset: '5' }]),
    });

    // A second member joins: the group's generation moves on, and the first member's old identity is a zombie's.
    await member(groupId, 'second');
    await expect.poll(() => first.joins.length, { timeout: 20_000 }).toBeGreaterThan(1);
    const refused = await commitAs(before, 9).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused, 'a commit with the old generation was accepted').toBeDefined();
    expect(isGenerationMoved(refused), String(kafkaErrorType(refused))).toBe(true);
    // Nothing of the refused transaction is committed: neither its offset nor its record.
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic], stable: true });
    expect(committed?.partitions.find((p) => p.partition === 0)?.offset).toBe('5');
    const values: string[] = [];
    await readToEnd(kafka, topic, (batch) => values.push(...batch.messages.map((m) => m.value?.toString() ?? '')));
    expect(values).toContain('5');
    expect(values).not.toContain('9');
  });

  it("commits a round's offsets of several partitions in one TxnOffsetCommit, each partition's own", async () => {
    const groupId = `int-transactions-offsets-${randomUUID()}`;
    const { consumer } = await member(groupId, 'several');
    const requests = channel('tracing:plt:kafka:connections:api:start');
    let offsetCommits = 0;
    const onRequest = (context: unknown) => void ((context as { apiKey?: number }).apiKey === 28 && offsetCommits++);
    requests.subscribe(onRequest);
    try {
      await inTransaction(producer, async (transaction) => {
        await transaction.sendBatch({ topicMessages: [{ topic, messages: [{ partition: 2, key: 'k', value: 'several' }] }] });
        const partitions = [0, 1, 2].map((partition) => ({ partition, offset: String(10 + partition) }));
        await transaction.sendOffsets({ member: consumer.member(), topics: [{ topic, partitions }] });
      });
    } finally {
      requests.unsubscribe(onRequest);
    }
    expect(offsetCommits).toBe(1);
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic], stable: true });
    expect(committed?.partitions.sort((a, b) => a.partition - b.partition)).toEqual([
      { partition: 0, offset: '10' },
      { partition: 1, offset: '11' },
      { partition: 2, offset: '12' },
    ]);
  });

  it('aborts a transaction whose work fails: TransactionAborted, its cause kept, nothing of it visible; the next one commits', async () => {
    const cause = new Error('the cluster refused the round');
    const value = `aborted-${randomUUID()}`;
    const failed = await failureOf(
      inTransaction(producer, async (transaction) => {
        await transaction.sendBatch({ topicMessages: [{ topic, messages: [{ partition: 1, key: 'k', value }] }] });
        throw cause;
      }),
    );
    expectAbortedBy(failed, cause);
    const after = `after-${randomUUID()}`;
    await inTransaction(producer, (transaction) =>
      transaction.sendBatch({ topicMessages: [{ topic, messages: [{ partition: 1, key: 'k', value: after }] }] }),
    );
    const values: string[] = [];
    await readToEnd(kafka, topic, (batch) => values.push(...batch.messages.map((m) => m.value?.toString() ?? '')));
    expect(values).toContain(after);
    expect(values).not.toContain(value);
  });

  it('answers a transaction that cannot begin (no broker answers) as aborted, its cause the broker being away', async () => {
    const unreachable = transactionalProducer(quietKafka(['127.0.0.1:1'], 'int-transactions-unreachable'), `unreachable-${randomUUID()}`);
    try {
      const failed = await failureOf(inTransaction(unreachable, async () => undefined));
      expect(failed).toBeInstanceOf(TransactionAborted);
      expect(isBrokerAway(failed)).toBe(true);
    } finally {
      await unreachable.disconnect().catch(() => undefined);
    }
  });

  /**
   * How often the transactional producers of this process add partitions to their transactions (AddPartitionsToTxn,
   * each counted once however often a busy coordinator has it asked again) while `run` runs.
   */
  const partitionAdditionsDuring = async (run: () => Promise<unknown>): Promise<number> => {
    const started = channel('tracing:plt:kafka:producer:transactions:start');
    let count = 0;
    const onStart = (context: unknown) => void ((context as { operation?: string }).operation === 'addPartitions' && count++);
    started.subscribe(onStart);
    try {
      await run();
    } finally {
      started.unsubscribe(onStart);
    }
    return count;
  };

  it('adds the partitions of records sent later in the transaction (replies) with the first send: one AddPartitionsToTxn', async () => {
    const keys = Array.from({ length: 12 }, (_, i) => `later-${i}-${randomUUID()}`);
    const first = { topic, messages: [{ partition: 0, key: 'first', value: 'x' }] };
    const later = (value: string | null) => [{ topic, messages: keys.map((key) => ({ key, value })) }];
    const announced = await partitionAdditionsDuring(() =>
      inTransaction(producer, async (transaction) => {
        await transaction.sendBatch({ topicMessages: [first] }, later(null));
        await transaction.sendBatch({ topicMessages: later('announced') });
      }),
    );
    const unannounced = await partitionAdditionsDuring(() =>
      inTransaction(producer, async (transaction) => {
        await transaction.sendBatch({ topicMessages: [first] });
        await transaction.sendBatch({ topicMessages: later('unannounced') });
      }),
    );
    expect({ announced, unannounced }).toEqual({ announced: 1, unannounced: 2 });
    // Every later record went where its key places it, as announced.
    const placed: string[] = [];
    await readToEnd(kafka, topic, (batch) => {
      for (const m of batch.messages) {
        if (keys.includes(m.key?.toString() ?? ''))
          placed.push(`${m.value?.toString()} ${batch.partition === partitionOfKey(m.key!.toString(), 3)}`);
      }
    });
    expect(placed.sort()).toEqual([...keys.map(() => 'announced true'), ...keys.map(() => 'unannounced true')]);
  });

  it('runs 300 rounds back to back, offsets first as a router commits them, without a failed round', async () => {
    const { consumer } = await member(`int-transactions-rounds-${randomUUID()}`, 'rounds');
    const failures: unknown[] = [];
    for (let index = 0; index < 300; index++) {
      await inTransaction(producer, async (transaction) => {
        await retryTransient(() =>
          transaction.sendOffsets({
            member: consumer.member(),
            topics: [{ topic, partitions: [{ partition: 0, offset: String(index) }] }],
          }),
        );
        await retryTransient(() =>
          transaction.sendBatch({
            topicMessages: [{ topic, messages: [0, 1, 2].map((partition) => ({ partition, key: String(index), value: 'x' })) }],
          }),
        );
      }).catch((error: unknown) => failures.push(error));
    }
    expect(failures).toEqual([]);
  });

  it('tells where a log ends as a read_committed reader sees it, and everything written to it: an open transaction between', async () => {
    const ends = `int-transactions-ends-${randomUUID()}`;
    await ensureTopics(admin, '', [topicSpec(ends, 'events', 'key')], 1, 1_000_000);
    await inTransaction(producer, (transaction) => transaction.send({ topic: ends, messages: [{ partition: 0, key: 'a', value: 'a' }] }));
    const open = await producer.transaction();
    await open.send({ topic: ends, messages: [{ partition: 0, key: 'b', value: 'b' }] });
    const [committed, written] = [await logEnds(admin, ends), await logEnds(admin, ends, { written: true })];
    await open.commit();
    await admin.deleteTopics({ topics: [ends] }).catch(() => undefined);
    // a at 0, its commit marker at 1, b at 2: the stable end stops before the open transaction's first record.
    expect(committed.get(0)).toBe(2n);
    expect(written.get(0)).toBe(3n);
  });

  it('reads to the end what was written before the read, once its transaction has ended (the markers come after the commit)', async () => {
    const stable = `int-transactions-stable-${randomUUID()}`;
    await ensureTopics(admin, '', [topicSpec(stable, 'events', 'key')], 1, 1_000_000);
    const open = await producer.transaction();
    await open.send({ topic: stable, messages: [{ partition: 0, key: 'late', value: 'late' }] });
    const keys: string[] = [];
    const read = readToEnd(kafka, stable, (batch) => keys.push(...batch.messages.map((m) => m.key?.toString() ?? '')));
    // Committed only once the read has begun: the stable end at its call did not cover the record yet.
    await sleep(200);
    await open.commit();
    await read;
    await admin.deleteTopics({ topics: [stable] }).catch(() => undefined);
    expect(keys).toEqual(['late']);
  });

  it('never shows an aborted transaction, even one larger than a fetch (its abort marker in a later response)', async () => {
    const large = `int-transactions-aborted-${randomUUID()}`;
    await ensureTopics(admin, '', [topicSpec(large, 'events', 'key')], 1, 1_000_000);
    const chunk = 'a'.repeat(900_000);
    const aborted = await producer.transaction();
    // Seven record batches of 900 kB: well past one fetch's 4 MiB per partition.
    for (let i = 0; i < 7; i++) await aborted.send({ topic: large, messages: [{ partition: 0, key: `aborted-${i}`, value: chunk }] });
    await aborted.abort();
    await inTransaction(producer, (transaction) =>
      transaction.send({ topic: large, messages: [{ partition: 0, key: 'kept', value: 'kept' }] }),
    );
    const keys: string[] = [];
    await readToEnd(kafka, large, (batch) => keys.push(...batch.messages.map((m) => m.key?.toString() ?? '')));
    await admin.deleteTopics({ topics: [large] }).catch(() => undefined);
    expect(keys).toEqual(['kept']);
  });

  it("shows a producer's commits between its aborted transaction and a later abort marker that holds no records", async () => {
    // The layout a restart leaves: the same transactional id aborts, commits, then is aborted with nothing written to
    // the partition (here a send the broker refuses as too large; after a SIGKILL, a send that never arrived).
    const partitioned = `int-transactions-empty-abort-${randomUUID()}`;
    await ensureTopics(admin, '', [topicSpec(partitioned, 'events', 'key')], 1, 1_000_000);
    const transactionalId = `int-transactions-restarted-${randomUUID()}`;
    const before = transactionalProducer(kafka, transactionalId);
    const after = transactionalProducer(kafka, transactionalId);
    try {
      await before.connect();
      const aborted = await before.transaction();
      await aborted.send({ topic: partitioned, messages: [{ partition: 0, key: 'aborted', value: 'x' }] });
      await aborted.abort();
      await inTransaction(before, (t) => t.send({ topic: partitioned, messages: [{ partition: 0, key: 'committed-1', value: 'x' }] }));
      const empty = await before.transaction();
      const refused = empty.send({ topic: partitioned, messages: [{ partition: 0, key: 'too-large', value: 'y'.repeat(1_500_000) }] });
      await expect(refused).rejects.toThrow();
      await empty.abort();
      await after.connect();
      await inTransaction(after, (t) => t.send({ topic: partitioned, messages: [{ partition: 0, key: 'committed-2', value: 'x' }] }));
      const keys: string[] = [];
      await readToEnd(kafka, partitioned, (batch) => keys.push(...batch.messages.map((m) => m.key?.toString() ?? '')));
      expect(keys).toEqual(['committed-1', 'committed-2']);
    } finally {
      await before.disconnect().catch(() => undefined);
      await after.disconnect();
      await admin.deleteTopics({ topics: [partitioned] }).catch(() => undefined);
    }
  });

  it('commits the next transaction of a producer whose send the broker refused (its sequence numbers start again)', async () => {
    const refusing = `int-transactions-refused-send-${randomUUID()}`;
    await ensureTopics(admin, '', [topicSpec(refusing, 'events', 'key')], 1, 1_000_000);
    try {
      const refused = inTransaction(producer, (t) =>
        t.send({ topic: refusing, messages: [{ partition: 0, key: 'too-large', value: 'y'.repeat(1_500_000) }] }),
      );
      await expect(refused).rejects.toBeInstanceOf(TransactionAborted);
      await inTransaction(producer, (t) => t.send({ topic: refusing, messages: [{ partition: 0, key: 'next', value: 'x' }] }));
      const keys: string[] = [];
      await readToEnd(kafka, refusing, (batch) => keys.push(...batch.messages.map((m) => m.key?.toString() ?? '')));
      expect(keys).toEqual(['next']);
    } finally {
      await admin.deleteTopics({ topics: [refusing] }).catch(() => undefined);
    }
  });

  it("commits through a coordinator that its client's view of the cluster lacks (the view taken while that broker was away)", async () => {
    const value = `stale-view-${randomUUID()}`;
    await inTransaction(producer, async (transaction) => {
      await transaction.sendBatch({ topicMessages: [{ topic, messages: [{ partition: 2, key: 'k', value }] }] });
      // What a rolling restart left behind: the coordinator moved to a broker that was away when the client last
      // described the cluster, so its cached list of brokers lacks the one every transactional request must go to.
      const { client } = producer as unknown as { client: CachedView };
      expect(client.coordinatorId).toBeDefined();
      expect(client.currentMetadata?.brokers.delete(client.coordinatorId!)).toBe(true);
    });
    const values: string[] = [];
    await readToEnd(kafka, topic, (batch) => values.push(...batch.messages.map((m) => m.value?.toString() ?? '')));
    expect(values).toContain(value);
  });
});

/** A broker of the test's own that goes away while a transaction is open: its abort cannot reach the coordinator. */
describe('a transaction whose work and abort both fail', () => {
  let broker: PrivateKafka;
  let kafka: Kafka;
  let admin: Admin;
  const topic = `int-transactions-abort-failed-${randomUUID()}`;

  beforeAll(async () => {
    broker = await startPrivateKafka('transactions-abort');
    kafka = quietKafka(broker.brokers, 'int-transactions-abort');
    admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, '', [topicSpec(topic, 'events', 'key')], 1, 1_000_000);
  }, 120_000);

  afterAll(async () => {
    await admin?.disconnect().catch(() => undefined);
    await broker?.destroy();
  });

  it('is TransactionAborted (never committed), and the producer commits its next transaction once the broker is back', async () => {
    const producer = transactionalProducer(kafka, `int-transactions-abort-${randomUUID()}`);
    // A new broker creates its transaction log at the first producer's request: the coordinator is away until then.
    await retryKafka(
      () => producer.connect(),
      (attempt, error) => (attempt < 60 && isBrokerAway(error) ? 500 : undefined),
    );
    try {
      const cause = new Error('the round failed while the broker went away');
      const failed = await failureOf(
        inTransaction(producer, async (transaction) => {
          await transaction.send({ topic, messages: [{ partition: 0, key: 'never', value: 'x' }] });
          await broker.stop();
          throw cause;
        }),
      );
      expectAbortedBy(failed, cause);
      await broker.start();
      // The producer takes its id again first: the coordinator aborts the transaction left open.
      await retryKafka(
        () => inTransaction(producer, (t) => t.send({ topic, messages: [{ partition: 0, key: 'next', value: 'x' }] })),
        (attempt, error) => (attempt < 40 && error instanceof TransactionAborted && isBrokerAway(error) ? 250 : undefined),
      );
      const keys: string[] = [];
      await readToEnd(kafka, topic, (batch) => keys.push(...batch.messages.map((m) => m.key?.toString() ?? '')));
      expect(keys).toEqual(['next']);
    } finally {
      await producer.disconnect().catch(() => undefined);
    }
  }, 120_000);
});
