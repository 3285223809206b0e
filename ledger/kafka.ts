import { Kafka, logLevel, Partitioners, type Admin, type ITopicConfig, type LogEntry, type Producer, type Transaction } from 'kafkajs';
import type { Logger } from './logger.ts';
import { namespaced, type TopicSpec } from './topics.ts';

const levels: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
  [logLevel.NOTHING]: 'debug',
};

export function createKafka(brokers: string[], clientId: string, logger: Logger): Kafka {
  const log = logger.child({ component: 'kafkajs' });
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, ...rest } = entry;
        log[levels[level] ?? 'info'](rest, message);
      },
    retry: { initialRetryTime: 100 },
  });
}

/**
 * The producer of a single writer: its stable transactional id fences a previous incarnation of the same writer
 * and aborts that one's open transaction.
 */
export const transactionalProducer = (kafka: Kafka, transactionalId: string): Producer =>
  kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });

/** Runs `work` in one Kafka transaction: committed when it returns, aborted (and the error rethrown) when anything fails. */
export async function inTransaction<T>(producer: Producer, work: (transaction: Transaction) => Promise<T>, onAbortFailure: (error: unknown) => void = () => undefined): Promise<T> {
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

/**
 * Creates missing topics, each taking record batches up to `recordLimit` (plus headroom); existing ones are
 * left as they are (partition counts never shrink).
 */
export async function ensureTopics(admin: Admin, namespace: string, specs: TopicSpec[], partitions: number, recordLimit: number, attempt = 1): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing: ITopicConfig[] = specs
    .map((spec) => ({ spec, name: namespaced(namespace, spec.name) }))
    .filter(({ name }) => !existing.has(name))
    .map(({ spec, name }) => ({
      topic: name,
      numPartitions: spec.kind === 'replies' ? 1 : partitions,
      replicationFactor: 1,
      configEntries: [
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
    // Two processes starting at once may race to create the same topic; that is fine.
    if (error instanceof Error && /already exists/i.test(error.message)) return;
    // KRaft may answer the leader check before the new topics' metadata has propagated; kafkajs gives up on
    // that at once, so look again (the topics now exist) a bounded number of times.
    if ((error as { type?: string }).type === 'UNKNOWN_TOPIC_OR_PARTITION' && attempt < 5) {
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      return ensureTopics(admin, namespace, specs, partitions, recordLimit, attempt + 1);
    }
    throw error;
  }
}
