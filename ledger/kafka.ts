/**
 * The Kafka port: the one place that knows the client library (`@platformatic/kafka`, under `ledger/kafka/`). The
 * runtime, the processors, the workers, the CLIs, the benches and the tests reach Kafka through what this module
 * exports, so a change of client is a change of that directory.
 */
import type { Logger } from './logger.ts';
import { sleep } from './sleep.ts';
import { KafkaAdmin, type NewTopic } from './kafka/admin.ts';
import { Kafka } from './kafka/client.ts';
import { kafkaErrorType } from './kafka/errors.ts';
import { RecordProducer, TransactionalProducer, type ProducerOptions } from './kafka/producer.ts';
import { namespaced, type TopicSpec } from './topics.ts';

export { KafkaAdmin, type CommittedTopicOffsets, type NewTopic, type PartitionMetadata } from './kafka/admin.ts';
export { Kafka } from './kafka/client.ts';
export {
  disconnectQuietly,
  isBrokerAway,
  isCoordinatorAway,
  isKafkaError,
  isProducerFenced,
  isTransientTransactionError,
  kafkaConnectionError,
  kafkaErrorType,
  kafkaProtocolError,
  retryKafka,
  retryTransient,
} from './kafka/errors.ts';
export { BATCHED_FETCH, GATHERED_FETCH, PROMPT_FETCH, type FetchedBatch, type FetchedRecord, type FetchSettings } from './kafka/fetcher.ts';
export { GroupConsumer, type Assignment, type GroupConsumerOptions, type GroupMember, type TopicOffsets } from './kafka/group-consumer.ts';
export { readPartitions, readToEnd } from './kafka/partition-reader.ts';
export {
  inTransaction,
  KafkaTransaction,
  partitionOfKey,
  RecordProducer,
  TransactionAborted,
  TransactionalProducer,
  type OutgoingRecord,
  type ProducerOptions,
  type TopicRecords,
  type WrittenRecords,
} from './kafka/producer.ts';

/** The port's admin (kafkajs's name, kept where the service's code asked for one). */
export type Admin = KafkaAdmin;
export type Producer = RecordProducer;

/** How many copies of each partition the cluster keeps, and how many must have a write before it is acknowledged. */
export type Replication = { factor: number; minInsync: number };

/** The service's clients: failures of its clients logged through `logger`, one line per kind per interval. */
export const createKafka = (brokers: string[], clientId: string, logger: Logger, instanceId?: string): Kafka =>
  new Kafka(brokers, clientId, logger, instanceId === undefined ? {} : { instanceId });

/**
 * Clients that log nothing, for probes, CLIs, benches and tests (their own output says what went wrong). `probe`:
 * short timeouts and no retries, so a question to a broker that is away is answered within about a second.
 */
export const quietKafka = (brokers: string[], clientId: string, options: { probe?: { requestTimeoutMs: number } } = {}): Kafka =>
  new Kafka(brokers, clientId, undefined, options);

/** A producer that places a keyed record where the Java client (and the service) does: murmur2 of the key. */
export const keyedProducer = (kafka: Kafka, options: ProducerOptions = {}): RecordProducer => new RecordProducer(kafka, options);

/** A transactional producer whose id fences every earlier producer of the same id (a crashed incarnation, a zombie). */
export const transactionalProducer = (kafka: Kafka, transactionalId: string): TransactionalProducer =>
  new TransactionalProducer(kafka, transactionalId);

/**
 * The end of each partition of a topic as a read_committed reader sees it (the last stable offset: a transaction still
 * open ends it), by partition.
 */
export const logEnds = (admin: KafkaAdmin, topic: string, options?: { written?: boolean }): Promise<Map<number, bigint>> =>
  admin.logEnds(topic, options);

/** The named settings of topics, as the broker reports them (topic → setting → value). */
export const topicSettings = (admin: KafkaAdmin, topics: string[], names: string[]): Promise<Record<string, Record<string, string>>> =>
  admin.topicSettings(topics, names);

/** Room above RECORD_LIMIT_BYTES for what the budget does not count exactly (record batch framing). */
const RECORD_HEADROOM_BYTES = 64 * 1024;

/** How long start-up waits for a busy controller to create the topics and elect their leaders before it gives up. */
const TOPIC_CREATION_PATIENCE_MS = 60_000;

/**
 * A refusal of the topics themselves (bad configuration, policy, authorisation) is final; anything else (the
 * controller timing out under load, leaders not elected yet, KRaft metadata behind, a connection dropped) passes.
 */
const FINAL_TOPIC_ERRORS = /INVALID_|POLICY_VIOLATION|AUTHORIZATION_FAILED|UNSUPPORTED_VERSION/;

/**
 * Creates missing topics, each taking record batches up to `recordLimit` (plus headroom); existing ones are left as
 * they are (partition counts never shrink). A controller busy creating other namespaces' topics may answer a creation
 * with a timeout or take long to elect leaders: look again (what was created stays) for up to a minute.
 */
export async function ensureTopics(
  admin: KafkaAdmin,
  namespace: string,
  specs: TopicSpec[],
  partitions: number,
  recordLimit: number,
  replication: Replication = { factor: 1, minInsync: 1 },
  giveUpAt = Date.now() + TOPIC_CREATION_PATIENCE_MS,
  attempt = 1,
): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing: NewTopic[] = specs
    .map((spec) => ({ spec, name: namespaced(namespace, spec.name) }))
    .filter(({ name }) => !existing.has(name))
    .map(({ spec, name }) => ({
      topic: name,
      numPartitions: spec.kind === 'replies' ? 1 : partitions,
      replicationFactor: replication.factor,
      configEntries: [
        { name: 'min.insync.replicas', value: String(replication.minInsync) },
        { name: 'max.message.bytes', value: String(recordLimit + RECORD_HEADROOM_BYTES) },
        ...(spec.compacted ? [{ name: 'cleanup.policy', value: 'compact' }] : []),
        // A reply matters only while its request waits.
        ...(spec.kind === 'replies' ? [{ name: 'retention.ms', value: String(24 * 3600 * 1000) }] : []),
      ],
    }));
  if (missing.length === 0) return;
  try {
    await admin.createTopics({ topics: missing, waitForLeaders: true });
  } catch (error) {
    const type = kafkaErrorType(error) ?? '';
    // Two processes starting at once may race to create the same topic; that is fine.
    if (type === 'TOPIC_ALREADY_EXISTS')
      return ensureTopics(admin, namespace, specs, partitions, recordLimit, replication, giveUpAt, attempt);
    if (FINAL_TOPIC_ERRORS.test(type) || Date.now() >= giveUpAt) throw error;
    await sleep(Math.min(2_000, 200 * attempt));
    return ensureTopics(admin, namespace, specs, partitions, recordLimit, replication, giveUpAt, attempt + 1);
  }
}
