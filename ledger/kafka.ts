/**
 * The Kafka port: the one module that knows the client library. The runtime, the processors, the workers, the CLIs, the
 * benches and the tests reach Kafka through what this module exports, so a change of client is a change of this file.
 */
import kafkajs, {
  AssignerProtocol,
  Kafka,
  logLevel,
  Partitioners,
  type Admin,
  type Consumer,
  type ConsumerConfig,
  type ITopicConfig,
  type LogEntry,
  type PartitionAssigner,
  type PartitionMetadata,
  type Producer,
  type ProducerConfig,
  type Transaction,
} from 'kafkajs';
import type { Logger } from './logger.ts';
import { sleep } from './sleep.ts';
import type { PartSignals } from './supervisor.ts';
import { rootCause, ThrottledLog } from './throttled-log.ts';
import { namespaced, type TopicSpec } from './topics.ts';

export type { Admin, Consumer, ConsumerConfig, ConsumerRunConfig, EachBatchPayload, Kafka, Producer } from 'kafkajs';

/** How many copies of each partition the cluster keeps, and how many must have a write before it is acknowledged. */
export type Replication = { factor: number; minInsync: number };

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
/** A record as fetched. */
export type FetchedRecord = {
  key: Buffer | null;
  value: Buffer | null;
  offset: string;
  headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
};
/** Consecutive records of one partition, as fetched. */
export type FetchedBatch = { topic: string; partition: number; messages: FetchedRecord[]; lastOffset(): string };
/** Offsets to commit (each the next offset to read), by topic and partition. */
export type TopicOffsets = { topic: string; partitions: { partition: number; offset: string }[] };

// kafkajs re-exports its errors with a spread, which Node's ESM named-export detection cannot see.
const { KafkaJSError, KafkaJSConnectionError } = kafkajs;

/** Whether an error comes from the Kafka client (a broker unreachable, a request refused or timed out). */
export const isKafkaError = (error: unknown): boolean => error instanceof KafkaJSError;

/** The error the client raises when it cannot reach a broker (for tests of what the service makes of it). */
export const kafkaConnectionError = (message: string): Error => new KafkaJSConnectionError(message);

/**
 * A client that logs nothing, for probes, CLIs, benches and tests (their own output says what went wrong). `probe`:
 * short timeouts and no retries, so a question to a broker that is away is answered within about a second.
 */
export const quietKafka = (brokers: string[], clientId: string, options: { probe?: { requestTimeoutMs: number } } = {}): Kafka =>
  new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.NOTHING,
    ...(options.probe ? { connectionTimeout: 1_000, requestTimeout: options.probe.requestTimeoutMs, retry: { retries: 0 } } : {}),
  });

/** A producer that places a keyed record where the Java client (and the service) does: murmur2 of the key. */
export const keyedProducer = (kafka: Kafka, config: Omit<ProducerConfig, 'createPartitioner'> = {}): Producer =>
  kafka.producer({ ...config, createPartitioner: Partitioners.DefaultPartitioner });

/** The partition the service's producers give a record keyed by `key` on a topic of `partitions`. */
export function partitionOfKey(key: string, partitions: number): number {
  const partitionMetadata: PartitionMetadata[] = Array.from({ length: partitions }, (_, partitionId) => ({
    partitionErrorCode: 0,
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
  }));
  return Partitioners.DefaultPartitioner()({ topic: 'any', partitionMetadata, message: { key, value: null } });
}

/**
 * The end of each partition of a topic as a read_committed reader sees it (the last stable offset: a transaction still
 * open ends it), by partition.
 */
export async function logEnds(admin: Admin, topic: string): Promise<Map<number, bigint>> {
  return new Map((await admin.fetchTopicOffsets(topic)).map(({ partition, high }) => [partition, BigInt(high)]));
}

/** The named settings of topics, as the broker reports them (topic → setting → value). */
export async function topicSettings(admin: Admin, topics: string[], names: string[]): Promise<Record<string, Record<string, string>>> {
  const configs = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((name) => ({ type: kafkajs.ConfigResourceTypes.TOPIC, name, configNames: names })),
  });
  return Object.fromEntries(
    configs.resources.map((r) => [r.resourceName, Object.fromEntries(r.configEntries.map((e) => [e.configName, e.configValue]))]),
  );
}

/** A group of one member that is given exactly `partitions` of `topic` (kafkajs has no manual assignment). */
export const fixedAssignment =
  (topic: string, partitions: number[]): PartitionAssigner =>
  () => ({
    name: 'FixedPartitions',
    version: 1,
    assign: async ({ members }) =>
      members.map(({ memberId }, index) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 1,
          assignment: index === 0 ? { [topic]: partitions } : {},
          userData: Buffer.alloc(0),
        }),
      })),
    protocol: ({ topics }) => ({
      name: 'FixedPartitions',
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }),
    }),
  });

const levels: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
  [logLevel.NOTHING]: 'debug',
};

export function createKafka(brokers: string[], clientId: string, logger: Logger): Kafka {
  // kafkajs logs every retry of an outage, with its stack: one line per kind per interval is enough.
  const log = new ThrottledLog(logger.child({ component: 'kafkajs' }));
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ namespace, level, log: entry }: LogEntry) => {
        const { message, stack: _stack, timestamp: _timestamp, logger: _logger, ...rest } = entry;
        // Our idempotent producers retry a bounded number of times on purpose: a failure is a 503 or an aborted
        // transaction, and the producer is replaced. kafkajs warns about that at every creation.
        if (message.startsWith('Limiting retries for the idempotent producer')) return;
        const severity = levels[level] ?? 'info';
        log.write(
          severity === 'debug' ? 'info' : severity,
          `${namespace}|${String(rest.groupId ?? '')}|${message}`,
          { namespace, ...rest },
          message,
        );
      },
    retry: { initialRetryTime: 100 },
  });
}

/**
 * The producer of a single writer (of one input partition, see `ledger/partition-tasks.ts`): its stable transactional
 * id fences a previous incarnation of the same writer, on this instance or another, and aborts that one's open transaction.
 */
export const transactionalProducer = (kafka: Kafka, transactionalId: string): Producer =>
  keyedProducer(kafka, {
    transactionalId,
    idempotent: true,
    maxInFlightRequests: 1,
    // A coordinator still writing the previous commit's markers (CONCURRENT_TRANSACTIONS) is done within a few ms:
    // back to back, a 2 ms first pause costs 4.9 ms a transaction against 10.3 ms with 10 ms (the default is 100 ms).
    retry: { initialRetryTime: 2, maxRetryTime: 1_000, retries: 15 },
  });

/**
 * Answers a transactional request gets while the coordinator is still busy (writing the previous commit's markers,
 * loading, moving): they are transient, so the same step is tried again in place after a short pause.
 */
const TRANSIENT_TRANSACTION_ERRORS = new Set([
  'CONCURRENT_TRANSACTIONS',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR',
]);

/** The broker's name for the error behind a failure (`NOT_COORDINATOR`, …), however deep the client wrapped it. */
export const kafkaErrorType = (error: unknown): string | undefined => (rootCause(error) as { type?: string } | undefined)?.type;

export const isTransientTransactionError = (error: unknown): boolean => TRANSIENT_TRANSACTION_ERRORS.has(String(kafkaErrorType(error)));

/**
 * Runs `step` again while it fails and `pause(attempt, error)` (attempt 0 the first failure) names how long to wait
 * first; `undefined` gives up and rethrows. Each caller says which Kafka errors pass and for how long.
 */
export async function retryKafka<T>(step: () => Promise<T>, pause: (attempt: number, error: unknown) => number | undefined): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      const ms = pause(attempt, error);
      if (ms === undefined) throw error;
      await sleep(ms);
    }
  }
}

/**
 * Retries one step of a transaction (send offsets, send records) while the broker answers with a transient error,
 * 5 ms then doubling to 200 ms, for about 3 s in all; kafkajs retries AddPartitionsToTxn but not AddOffsetsToTxn.
 */
export const retryTransient = <T>(step: () => Promise<T>, onRetry: (error: unknown) => void = () => undefined): Promise<T> =>
  retryKafka(step, (attempt, error) => {
    if (!isTransientTransactionError(error) || attempt >= 20) return undefined;
    onRetry(error);
    return Math.min(200, 5 * 2 ** attempt) * (0.5 + Math.random() / 2);
  });

/**
 * A consumer whose supervisor decides about restarts: kafkajs restarts a crashed consumer only after some errors
 * (never after "Failed to find group coordinator"), and not with a fresh producer beside it.
 */
export function supervisedConsumer(kafka: Kafka, config: ConsumerConfig, signals: PartSignals): Consumer {
  const consumer = kafka.consumer({
    // A crashed instance's members hold the group until their session expires; 10 s rather than 30 s, with a
    // heartbeat every 3 s (a third of it: an idle service's 13 consumers cost 6.8 -> 5.9 % of a core with 1 s).
    sessionTimeout: 10_000,
    heartbeatInterval: 3_000,
    // A fetch answers as soon as a record is there; the wait only bounds how often an idle consumer asks again
    // (measured: c=1 p50 12.4 -> 11.9 ms, service idle CPU 8.9 -> 6.8 % of a core, Kafka CPU per write 2.8 -> 1.8 ms).
    maxWaitTimeInMs: 1_000,
    ...config,
    retry: { initialRetryTime: 100, retries: 3, restartOnFailure: async () => false },
  });
  consumer.on(consumer.events.GROUP_JOIN, () => signals.running());
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) signals.failed(payload.error);
  });
  return consumer;
}

/**
 * How a consumer that no request waits for fetches: the broker answers once 64 KiB are there or a second has passed.
 * Under load it reads a few large batches a second instead of one fetch (and one round of work after it) per handful
 * of records; when traffic is light it runs up to a second behind.
 */
export const BATCHED_FETCH = { minBytes: 64 * 1024, maxWaitTimeInMs: 1_000 } as const satisfies Partial<ConsumerConfig>;

/** Stops clients in order, each as far as it can: a client of a broker that went away may fail to say goodbye. */
export async function disconnectQuietly(...clients: ({ disconnect: () => Promise<void> } | undefined)[]): Promise<void> {
  for (const client of clients) await client?.disconnect().catch(() => undefined);
}

/** Runs `work` in one Kafka transaction: committed when it returns, aborted (and the error rethrown) when anything fails. */
export async function inTransaction<T>(
  producer: Producer,
  work: (transaction: Transaction) => Promise<T>,
  onAbortFailure: (error: unknown) => void = () => undefined,
): Promise<T> {
  const transaction = await producer.transaction();
  try {
    const result = await work(transaction);
    await transaction.commit();
    return result;
  } catch (error) {
    await transaction.abort().catch(onAbortFailure);
    throw error;
  }
}

/** Room above RECORD_LIMIT_BYTES for what the budget does not count exactly (record batch framing). */
const RECORD_HEADROOM_BYTES = 64 * 1024;

/** How long start-up waits for a busy controller to create the topics and elect their leaders before it gives up. */
const TOPIC_CREATION_PATIENCE_MS = 60_000;

/**
 * A refusal of the topics themselves (bad configuration, policy, authorisation) is final; anything else (the
 * controller timing out under load, leaders not elected yet, KRaft metadata behind, a connection dropped) passes.
 */
const FINAL_TOPIC_ERRORS = /INVALID_|POLICY_VIOLATION|AUTHORIZATION_FAILED|UNSUPPORTED_VERSION/;
const isFinalTopicError = (error: unknown): boolean => {
  const errors = (error as { errors?: unknown[] }).errors ?? [error];
  return errors.some((e) => FINAL_TOPIC_ERRORS.test(String((e as { type?: string }).type ?? '')));
};

/**
 * Creates missing topics, each taking record batches up to `recordLimit` (plus headroom); existing ones are
 * left as they are (partition counts never shrink). kafkajs gives up at once when the controller answers a
 * creation with a timeout or the leaders take more than its wait, which a broker busy creating other
 * namespaces' topics does: look again (what was created stays) for up to a minute.
 */
export async function ensureTopics(
  admin: Admin,
  namespace: string,
  specs: TopicSpec[],
  partitions: number,
  recordLimit: number,
  replication: Replication = { factor: 1, minInsync: 1 },
  giveUpAt = Date.now() + TOPIC_CREATION_PATIENCE_MS,
  attempt = 1,
): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing: ITopicConfig[] = specs
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
    await admin.createTopics({ topics: missing, waitForLeaders: true, timeout: 30_000 });
  } catch (error) {
    // Two processes starting at once may race to create the same topic; that is fine.
    if (error instanceof Error && /already exists/i.test(error.message)) return;
    if (isFinalTopicError(error) || Date.now() >= giveUpAt) throw error;
    await sleep(Math.min(2_000, 200 * attempt));
    return ensureTopics(admin, namespace, specs, partitions, recordLimit, replication, giveUpAt, attempt + 1);
  }
}
