import {
  compatibilityPartitioner,
  kGetApi,
  kGetConnection,
  kMetadata,
  kPerformWithRetry,
  Producer as ClientProducer,
  ProduceAcks,
  type Broker,
  type Callback,
  type Connection,
  type Consumer as ClientConsumer,
  type MessageToProduce,
  type ProduceResult,
  type txnOffsetCommitV4,
} from '@platformatic/kafka';
import { isBrokerAway, isProducerFenced, isTransientTransactionError, retryKafka, retryTransient } from './errors.ts';
import type { ClientSettings as Kafka } from './settings.ts';
import type { GroupMember, TopicOffsets } from './group-consumer.ts';
import { brokerInMetadata } from './left-broker.ts';

/** A record to append; without `partition` the producer places it by its key (murmur2, as the Java client does). */
export type OutgoingRecord = {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  partition?: number;
  headers?: Record<string, string>;
};
/** Records to append to one topic. */
export type TopicRecords = { topic: string; messages: OutgoingRecord[] };
/** Where a write's records of one topic-partition went: `baseOffset` is the offset of the first. */
export type WrittenRecords = { topicName: string; partition: number; baseOffset?: string };

export type ProducerOptions = {
  /** Exactly once per partition and session (sequence numbers): a retried request is not written twice. */
  idempotent?: boolean;
  /** How often the client tries a request again before it fails (few: while the broker is away a write should fail fast). */
  retries?: number;
  /** Makes it a transactional producer: opening it fences every earlier producer of the same id. */
  transactionalId?: string;
};

type ClientTransaction = Awaited<ReturnType<ClientProducer['beginTransaction']>>;

const asBuffer = (data: Buffer | string | null | undefined): Buffer | undefined =>
  data === null || data === undefined ? undefined : Buffer.isBuffer(data) ? data : Buffer.from(data);

function toMessages(topicMessages: TopicRecords[]): MessageToProduce[] {
  return topicMessages.flatMap(({ topic, messages }) =>
    messages.map((message) => ({
      topic,
      key: asBuffer(message.key),
      // A tombstone (compaction deletes the key) is a record with a null value.
      value: asBuffer(message.value) ?? (null as unknown as Buffer),
      ...(message.partition === undefined ? {} : { partition: message.partition }),
      ...(message.headers ? { headers: new Map(Object.entries(message.headers).map(([k, v]) => [Buffer.from(k), Buffer.from(v)])) } : {}),
    })),
  );
}

const written = (result: ProduceResult): WrittenRecords[] =>
  (result.offsets ?? []).map(({ topic, partition, offset }) => ({ topicName: topic, partition, baseOffset: offset.toString() }));

/**
 * The client of every producer of the port. A transaction's coordinator that moved, in a rolling restart, to a broker
 * that was away when the client last took the cluster's metadata was out of its reach: every request of the
 * transaction failed "not available in the current cluster metadata" until the producer was replaced (a commit stalled
 * about 14 s, and the writes waiting on it were answered 503). See `brokerInMetadata`.
 */
class ProducerClient extends ClientProducer {
  override [kGetConnection](broker: Broker | undefined, callback: Callback<Connection>): void {
    const present = brokerInMetadata(this, broker, callback);
    if (present) super[kGetConnection](present, callback);
  }

  /**
   * Commits every partition's offset in the open transaction as `member`, in one TxnOffsetCommit: the client's
   * `addOffset` sends a request per partition, one after the other, each a round trip to the group's coordinator and an
   * append to its offsets log. Retried as the client retries its own.
   */
  commitTransactionOffsets(member: GroupMember, topics: TopicOffsets[]): Promise<void> {
    const { producerId, producerEpoch } = this;
    const transactionalId = this.transaction?.id;
    if (transactionalId === undefined || producerId === undefined || producerEpoch === undefined)
      return Promise.reject(new Error('offsets committed outside a transaction'));
    return new Promise((resolve, reject) => {
      void this[kPerformWithRetry]<void>(
        'commit',
        (retry) => {
          this[kMetadata]({ topics: topics.map(({ topic }) => topic) }, (error, metadata) => {
            if (error || !metadata) return retry(error);
            this[kGetConnection](metadata.brokers.get(member.coordinatorId), (error, connection) => {
              if (error || !connection) return retry(error);
              this[kGetApi]<TxnOffsetCommitArguments, unknown>('TxnOffsetCommit', (error, api) => {
                if (error || !api) return retry(error);
                const committed = topics.map(({ topic, partitions }) => ({
                  name: topic,
                  partitions: partitions.map(({ partition, offset }) => ({
                    partitionIndex: partition,
                    committedOffset: BigInt(offset),
                    committedLeaderEpoch: metadata.topics.get(topic)?.partitions[partition]?.leaderEpoch ?? -1,
                    committedMetadata: null,
                  })),
                }));
                const { groupId, generationId, memberId } = member;
                api(connection, transactionalId, groupId, producerId, producerEpoch, generationId, memberId, null, committed, (error) =>
                  retry(error ?? null),
                );
              });
            });
          });
        },
        (error) => (error ? reject(error) : resolve()),
      );
    });
  }
}

type TxnOffsetCommitArguments = Parameters<typeof txnOffsetCommitV4.createRequest>;

/**
 * A producer of the port: keyed records land where the Java client (and every producer of the service) puts them
 * (murmur2 of the key, its low 31 bits), every write acknowledged by all in-sync replicas.
 */
export class RecordProducer {
  protected client: ProducerClient;

  private readonly options: ProducerOptions;

  constructor(kafka: Kafka, options: ProducerOptions = {}) {
    this.options = options;

    this.client = this.createClient(kafka);
  }

  protected createClient(kafka: Kafka): ProducerClient {
    const { options } = this;
    return new ProducerClient({
      ...kafka.options(options.retries === undefined ? {} : { retries: options.retries }),
      idempotent: options.idempotent ?? options.transactionalId !== undefined,
      acks: ProduceAcks.ALL,
      partitioner: compatibilityPartitioner,
      ...(options.transactionalId
        ? // A transaction that a crash left open is aborted by the broker after this long (its records then never appear).
          { transactionalId: options.transactionalId, producerId: -1n, producerEpoch: -1, timeout: 10_000 }
        : {}),
    });
  }

  /** Reaches the cluster (and, for an idempotent producer, gets its producer id). */
  async connect(): Promise<void> {
    await this.client.metadata({ topics: [] });
  }

  async send({ topic, messages }: { topic: string; messages: OutgoingRecord[] }): Promise<WrittenRecords[]> {
    return this.sendBatch({ topicMessages: [{ topic, messages }] });
  }

  async sendBatch({ topicMessages }: { topicMessages: TopicRecords[] }): Promise<WrittenRecords[]> {
    const messages = toMessages(topicMessages);
    if (messages.length === 0) return [];
    return written(await this.client.send({ messages }));
  }

  async disconnect(): Promise<void> {
    await this.client.close();
  }
}

/**
 * A transactional producer (one per processor instance and group, KIP-447): its transactions write records and commit
 * the consumed offsets with the group member's generation, so a member the group has moved on from cannot commit.
 */
export class TransactionalProducer extends RecordProducer {
  private needsNewEpoch = false;

  private readonly kafka: Kafka;

  constructor(kafka: Kafka, transactionalId: string) {
    super(kafka, { transactionalId });
    this.kafka = kafka;
  }

  /**
   * Takes the transactional id: fences every earlier producer of it, whose open transaction the broker aborts. A client
   * whose first transaction could not begin keeps it half begun: the next attempt takes a fresh client.
   */
  override async connect(): Promise<void> {
    try {
      const transaction = await this.client.beginTransaction();
      await transaction.cancel();
    } catch (error) {
      await this.replaceClient();
      throw error;
    }
  }

  /** A fresh client in place of the current one, which is closed (as far as it can be). */
  private async replaceClient(): Promise<void> {
    const broken = this.client;
    this.client = this.createClient(this.kafka);
    await broken.close().catch(() => undefined);
  }

  /**
   * Begins a transaction (the producer has one at a time). After a transaction whose send failed, the client first
   * takes the id again: it counted the failed send's records in its sequence numbers and does not take them back, so
   * its next send would be refused (OUT_OF_ORDER_SEQUENCE_NUMBER); a new epoch starts them from 0 (as KIP-360's bump).
   * After one whose abort failed too: taking the id again has the coordinator abort it, should it still be open.
   * A producer fenced by a newer one does not: taking the id back would fence the newer incarnation in turn.
   */
  async transaction(): Promise<KafkaTransaction> {
    if (this.needsNewEpoch) {
      await this.replaceClient();
      // The coordinator may still be writing the aborted transaction's markers (CONCURRENT_TRANSACTIONS).
      await retryTransient(() => this.connect());
      this.needsNewEpoch = false;
    }
    return new KafkaTransaction(this.client, await this.client.beginTransaction(), () => (this.needsNewEpoch = true));
  }
}

/** One open transaction: records sent in it, and the consumed offsets committed with it, appear together or never. */
export class KafkaTransaction {
  private readonly client: ProducerClient;
  private readonly transaction: ClientTransaction;
  /** The client can no longer carry on this producer's transactions: a send failed (records may have gone), or an abort did. */
  private readonly onBroken: () => void;

  constructor(client: ProducerClient, transaction: ClientTransaction, onBroken: () => void = () => undefined) {
    this.client = client;
    this.transaction = transaction;
    this.onBroken = onBroken;
  }

  async send({ topic, messages }: { topic: string; messages: OutgoingRecord[] }): Promise<WrittenRecords[]> {
    return this.sendBatch({ topicMessages: [{ topic, messages }] });
  }

  /**
   * Sends `topicMessages`. The partitions of `later` (records this transaction will send afterwards, such as replies
   * naming these records' offsets: only their keys count) join the transaction in the same request as these records'
   * own, so that sending them later costs no AddPartitionsToTxn round trip of its own.
   */
  async sendBatch({ topicMessages }: { topicMessages: TopicRecords[] }, later: TopicRecords[] = []): Promise<WrittenRecords[]> {
    const messages = toMessages(topicMessages);
    if (messages.length === 0) return [];
    try {
      if (later.length > 0) await this.addPartitionsOf([...messages, ...toMessages(later)]);
      return written(await this.transaction.send({ messages }));
    } catch (error) {
      // A busy coordinator answers AddPartitionsToTxn, which goes before any Produce: no sequence number was spent.
      if (!isProducerFenced(error) && !isTransientTransactionError(error)) this.onBroken();
      throw error;
    }
  }

  /** One AddPartitionsToTxn for every partition `messages` go to, placed as the client's send places them. */
  private async addPartitionsOf(messages: MessageToProduce[]): Promise<void> {
    const partitions = this.client.getSendTopicPartitions({ messages });
    const metadata = await this.client.metadata({ topics: [...partitions.keys()] });
    const records = [...partitions].flatMap(([topic, numbers]) => [...numbers].map((partition) => ({ topic, partition })));
    await this.transaction.addPartitions(metadata, records as Parameters<ClientTransaction['addPartitions']>[1]);
  }

  /**
   * Commits a group's offsets with this transaction, as the member `member` (the group refuses them once its
   * partitions have moved on), every partition in one request.
   */
  async sendOffsets({ member, topics }: { member: GroupMember; topics: TopicOffsets[] }): Promise<void> {
    await this.transaction.addConsumer({ groupId: member.groupId } as ClientConsumer);
    const offsets = topics.filter(({ partitions }) => partitions.length > 0);
    if (offsets.length > 0) await this.client.commitTransactionOffsets(member, offsets);
  }

  async commit(): Promise<void> {
    await endTransaction(() => this.transaction.commit());
  }

  /**
   * Aborts (because of `cause`); a transaction the broker never heard of (nothing sent yet) is only forgotten. When the
   * abort fails, the producer takes its id again before its next transaction, which aborts this one if it is still
   * open, unless a newer producer fenced it (taking the id back would fence that one in turn).
   */
  async abort(cause?: unknown): Promise<void> {
    try {
      await endTransaction(() => this.transaction.abort());
    } catch (error) {
      await this.transaction.cancel().catch(() => undefined);
      if (!isProducerFenced(error) && !isProducerFenced(cause)) this.onBroken();
      throw error;
    }
  }
}

/**
 * Ends a transaction, asking again for about 5 s while its coordinator is busy, moving or away (the client's own three
 * tries last 35 ms against a busy one): a coordinator that has ended it already answers the same end again as done, so
 * asking again settles the outcome where giving up would leave it unknown (and restart the part).
 */
const endTransaction = (end: () => Promise<void>): Promise<void> =>
  retryKafka(end, (attempt, error) =>
    attempt < 12 && (isTransientTransactionError(error) || isBrokerAway(error)) ? Math.min(500, 25 * 2 ** attempt) : undefined,
  );

/**
 * A transaction whose work failed and which the broker then aborted: nothing of it was written, so what it was for can
 * be tried again. Its cause is the work's failure.
 */
export class TransactionAborted extends Error {
  constructor(cause: unknown) {
    super(`transaction aborted: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'TransactionAborted';
  }
}

/**
 * Runs `work` in one Kafka transaction: committed when it returns. When `work` fails the transaction is aborted and a
 * `TransactionAborted` thrown (as when the transaction cannot begin). Should that abort fail too, the transaction is
 * still never committed (only this producer could commit it, and its next transaction takes the id again, which has
 * the coordinator abort it), so `TransactionAborted` all the same, unless a newer producer fenced this one (then the
 * failure itself). When the commit fails (it may have landed all the same), the failure itself is thrown: the
 * transaction's outcome is unknown.
 */
export async function inTransaction<T>(
  producer: TransactionalProducer,
  work: (transaction: KafkaTransaction) => Promise<T>,
  onAbortFailure: (error: unknown) => void = () => undefined,
): Promise<T> {
  // A transaction that could not begin wrote nothing: as one aborted, its cause says whether to try again.
  const transaction = await producer.transaction().catch((error: unknown) => {
    throw new TransactionAborted(error);
  });
  let result: T;
  try {
    result = await work(transaction);
  } catch (error) {
    const fenced = await transaction.abort(error).then(
      () => false,
      (abortFailure: unknown) => {
        onAbortFailure(abortFailure);
        return isProducerFenced(abortFailure);
      },
    );
    throw fenced ? error : new TransactionAborted(error);
  }
  try {
    await transaction.commit();
  } catch (error) {
    await transaction.abort(error).catch(onAbortFailure);
    throw error;
  }
  return result;
}

/** The partition the service's producers give a record keyed by `key` on a topic of `partitions`. */
export const partitionOfKey = (key: string, partitions: number): number =>
  compatibilityPartitioner({ topic: 'any', value: Buffer.alloc(0) }, Buffer.from(key)) % partitions;
