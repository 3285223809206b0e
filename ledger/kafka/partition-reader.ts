import { randomUUID } from 'node:crypto';
import { sleep } from '../sleep.ts';
import { UnfilteredConsumer } from './unfiltered-consumer.ts';
import { KafkaAdmin } from './admin.ts';
import type { ClientSettings as Kafka } from './settings.ts';
import { Fetcher, type FetchedBatch, type FetchSettings } from './fetcher.ts';

const READ_FETCH: FetchSettings = { maxWaitMs: 100, minBytes: 1, maxBytes: 50 * 1024 * 1024, partitionMaxBytes: 4 * 1024 * 1024 };

/**
 * Reads partitions of a topic outside any consumer group (a state restore, a CLI, a test), read_committed, each from
 * its own offset, until `onBatch` says a partition is done (`true`) for every one of them, or `cancelled` aborts.
 */
export async function readPartitions(
  kafka: Kafka,
  topic: string,
  from: Map<number, bigint>,
  onBatch: (batch: FetchedBatch) => boolean,
  cancelled?: AbortSignal,
): Promise<void> {
  if (from.size === 0) return;
  // The client's consumer needs a group name; this one never joins it.
  const client = new UnfilteredConsumer({ ...kafka.options(), groupId: `reader-${randomUUID()}` });
  const waiting = new Set(from.keys());
  let settle!: { resolve: () => void; reject: (error: unknown) => void };
  const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  const fetcher = new Fetcher(
    client,
    READ_FETCH,
    async (batches) => {
      for (const batch of batches) {
        if (!waiting.has(batch.partition)) continue;
        if (onBatch(batch)) {
          waiting.delete(batch.partition);
          fetcher.drop(topic, batch.partition);
        }
      }
      if (waiting.size === 0) settle.resolve();
    },
    (error, fatal) => {
      if (fatal) settle.reject(error);
      else kafka.warn(`read:${topic}`, error, 'fetch failed; asking again');
    },
  );
  const abort = () => settle.reject(cancelled?.reason);
  if (cancelled?.aborted) abort();
  cancelled?.addEventListener('abort', abort, { once: true });
  try {
    client.topics.trackAll(topic);
    for (const [partition, offset] of from) fetcher.seek(topic, partition, offset);
    await done;
  } finally {
    cancelled?.removeEventListener('abort', abort);
    await fetcher.stop();
    await client.close().catch(() => undefined);
  }
}

/** How long a read to the end waits for what was written before it to become stable (see `stableEnds`). */
const STABLE_WAIT_MS = 5_000;

/**
 * The end of each partition as a read_committed reader sees it, once it covers what was written before the call: a
 * transaction's commit is answered before the broker writes its markers, so a writer's committed records may still lie
 * beyond the stable end for a moment. A transaction left open longer (a producer killed in one) is read past after
 * STABLE_WAIT_MS, as the stable end then stands.
 */
async function stableEnds(admin: KafkaAdmin, topic: string): Promise<Map<number, bigint>> {
  const written = await admin.logEnds(topic, { written: true });
  const deadline = Date.now() + STABLE_WAIT_MS;
  for (;;) {
    const stable = await admin.logEnds(topic);
    const behind = [...written].some(([partition, end]) => (stable.get(partition) ?? 0n) < end);
    if (!behind || Date.now() >= deadline) return stable;
    await sleep(20);
  }
}

/** Every committed record of a topic up to its end at the call, partition by partition, in order within each. */
export async function readToEnd(
  kafka: Kafka,
  topic: string,
  onBatch: (batch: FetchedBatch) => void,
  cancelled?: AbortSignal,
): Promise<void> {
  const admin = new KafkaAdmin(kafka);
  let ends: Map<number, bigint>;
  try {
    ends = await stableEnds(admin, topic);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  const unread = new Map([...ends].filter(([, end]) => end > 0n).map(([partition]) => [partition, 0n] as const));
  await readPartitions(
    kafka,
    topic,
    unread,
    (batch) => {
      onBatch(batch);
      return BigInt(batch.lastOffset()) + 1n >= (ends.get(batch.partition) ?? 0n);
    },
    cancelled,
  );
}
