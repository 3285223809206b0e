import { FetchIsolationLevels, type Consumer as ClientConsumer } from '@platformatic/kafka';
import { abortedTransactionsOf } from './unfiltered-consumer.ts';

type FetchResponse = Awaited<ReturnType<ClientConsumer['fetch']>>;

/** A record as fetched. */
export type FetchedRecord = {
  key: Buffer | null;
  value: Buffer | null;
  offset: string;
  headers: Record<string, Buffer | undefined>;
};

/**
 * Consecutive committed records of one partition, as fetched: `lastOffset()` is the last offset the fetch covered,
 * transaction markers and aborted records included (so a position past it skips them too); `messages` may be empty
 * when the fetch covered only those.
 */
export type FetchedBatch = {
  topic: string;
  partition: number;
  messages: FetchedRecord[];
  lastOffset(): string;
  /** The partition's last stable offset at the fetch: what a read_committed reader can reach. */
  highWatermark: string;
};

/**
 * How a reader fetches: the broker answers once `minBytes` are there or `maxWaitMs` has passed. `whenIdle`: how it
 * fetches after a fetch that brought no record (none: the same way).
 */
export type FetchSettings = {
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  partitionMaxBytes: number;
  whenIdle?: FetchSettings;
};

export const PROMPT_FETCH: FetchSettings = { maxWaitMs: 1_000, minBytes: 1, maxBytes: 50 * 1024 * 1024, partitionMaxBytes: 1024 * 1024 };

/**
 * How a consumer that no request waits for fetches: the broker answers once 64 KiB are there or a second has passed.
 * Under load it reads a few large batches a second instead of one fetch (and one round of work after it) per handful
 * of records; when traffic is light it runs up to a second behind.
 */
export const BATCHED_FETCH: FetchSettings = { ...PROMPT_FETCH, minBytes: 64 * 1024 };

/**
 * How a reader fetches whose bulk no request waits for but some writes do (a read model awaited on few of its topics):
 * the broker answers once 16 KiB are there or 50 ms have passed, so a run of writes is read in one fetch and applied
 * in one round, and an awaited write waits at most 50 ms longer. Once a fetch brings nothing it fetches promptly (the
 * first record answers it): idle, it asked the broker twenty times a second for nothing.
 */
export const GATHERED_FETCH: FetchSettings = { ...PROMPT_FETCH, minBytes: 16 * 1024, maxWaitMs: 50, whenIdle: PROMPT_FETCH };

/** How the next fetch goes: as `settings` say, or as they say for an idle reader once the last fetch brought nothing. */
export const nextFetch = (settings: FetchSettings, lastBroughtRecords: boolean): FetchSettings =>
  lastBroughtRecords ? settings : (settings.whenIdle ?? settings);

type Cursor = { topic: string; partition: number; offset: bigint; busy: boolean };

const IS_TRANSACTIONAL = 0x10;
const IS_CONTROL = 0x20;
const OFFSET_OUT_OF_RANGE = 1;

/**
 * The fetch loop under every consumer of the port: partitions positioned by their owner (a group member, a state
 * restore) are fetched from their leaders, read_committed, one request per leader at a time; a partition's batch is
 * handed over and the partition fetched again only once its owner is done with it (so one partition's records are
 * handled in order, one batch at a time). A broker that is away is asked again, with backoff, for as long as it takes.
 */
export class Fetcher {
  private readonly cursors = new Map<string, Cursor>();
  private readonly fetching = new Set<number>();
  private readonly deliveries = new Set<Promise<void>>();
  private failures = 0;
  private retryTimer?: NodeJS.Timeout;
  private stopped = false;
  private pumping = false;
  private pumpAgain = false;
  /** By leader, whether its last answered fetch brought records (none yet: taken as busy). */
  private readonly broughtRecords = new Map<number, boolean>();

  private readonly client: ClientConsumer;
  private readonly settings: FetchSettings;
  /** Handles one fetch's batches (each of another partition); the partitions are fetched again once it settles. */
  private readonly deliver: (batches: FetchedBatch[]) => Promise<void>;
  /** A failed delivery (fatal: the fetcher has stopped) or a failed fetch (asked again after a pause). */
  private readonly onError: (error: unknown, fatal: boolean) => void;

  constructor(
    client: ClientConsumer,
    settings: FetchSettings,
    deliver: (batches: FetchedBatch[]) => Promise<void>,
    onError: (error: unknown, fatal: boolean) => void,
  ) {
    this.client = client;
    this.settings = settings;
    this.deliver = deliver;
    this.onError = onError;
  }

  /** Reads a partition from `offset` on (its earlier position, if any, is forgotten). */
  seek(topic: string, partition: number, offset: bigint): void {
    this.cursors.set(keyOf(topic, partition), { topic, partition, offset, busy: false });
    this.pump();
  }

  /** Stops reading a partition: a batch of it still being handled no longer moves its position. */
  drop(topic: string, partition: number): void {
    this.cursors.delete(keyOf(topic, partition));
  }

  dropAll(): void {
    this.cursors.clear();
  }

  has(topic: string, partition: number): boolean {
    return this.cursors.has(keyOf(topic, partition));
  }

  /** The partitions being read. */
  partitions(): { topic: string; partition: number }[] {
    return [...this.cursors.values()].map(({ topic, partition }) => ({ topic, partition }));
  }

  /** Stops fetching; resolves once the batches handed over have been handled. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    while (this.deliveries.size > 0) await Promise.allSettled([...this.deliveries]);
  }

  private pump(): void {
    if (this.stopped || this.retryTimer) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void this.fetchFromLeaders().finally(() => {
      this.pumping = false;
      if (this.pumpAgain) {
        this.pumpAgain = false;
        this.pump();
      }
    });
  }

  private async fetchFromLeaders(): Promise<void> {
    const idle = [...this.cursors.values()].filter((cursor) => !cursor.busy);
    if (idle.length === 0) return;
    const topics = [...new Set(idle.map(({ topic }) => topic))];
    let metadata;
    try {
      metadata = await this.client.metadata({ topics });
    } catch (error) {
      this.retryLater(error);
      return;
    }
    const byLeader = new Map<number, Cursor[]>();
    for (const cursor of idle) {
      const leader = metadata.topics.get(cursor.topic)?.partitions[cursor.partition]?.leader;
      if (leader === undefined || leader < 0) {
        this.client.clearMetadata();
        this.retryLater(new Error(`no leader for ${cursor.topic}[${cursor.partition}]`));
        continue;
      }
      if (this.fetching.has(leader)) continue;
      byLeader.set(leader, [...(byLeader.get(leader) ?? []), cursor]);
    }
    for (const [leader, cursors] of byLeader) {
      const ids = new Map(cursors.map(({ topic }) => [metadata.topics.get(topic)?.id ?? '', topic]));
      this.fetching.add(leader);
      for (const cursor of cursors) cursor.busy = true;
      void this.fetchFrom(leader, cursors, ids);
    }
  }

  private async fetchFrom(leader: number, cursors: Cursor[], topicOf: Map<string, string>): Promise<void> {
    const byTopic = new Map<string, Cursor[]>();
    for (const cursor of cursors) byTopic.set(cursor.topic, [...(byTopic.get(cursor.topic) ?? []), cursor]);
    const requested = new Map(cursors.map((cursor) => [keyOf(cursor.topic, cursor.partition), cursor.offset]));
    const settings = nextFetch(this.settings, this.broughtRecords.get(leader) ?? true);
    let response: FetchResponse | undefined;
    let failure: unknown;
    try {
      response = await this.client.fetch({
        node: leader,
        maxWaitTime: settings.maxWaitMs,
        minBytes: settings.minBytes,
        maxBytes: settings.maxBytes,
        isolationLevel: FetchIsolationLevels.READ_COMMITTED,
        topics: [...byTopic].map(([topic, partitions]) => ({
          topicId: [...topicOf].find(([, name]) => name === topic)?.[0] ?? '',
          partitions: partitions.map(({ partition, offset }) => ({
            partition,
            fetchOffset: offset,
            partitionMaxBytes: settings.partitionMaxBytes,
            currentLeaderEpoch: -1,
            lastFetchedEpoch: -1,
          })),
        })),
      });
    } catch (error) {
      // Some partitions answered with an error: the others' records are still in the response.
      response = (error as { response?: FetchResponse }).response;
      failure = error;
    }
    const batches: { batch: FetchedBatch; cursor: Cursor; next: bigint }[] = [];
    const answered = new Set<Cursor>();
    for (const topicResponse of response?.responses ?? []) {
      const topic = topicOf.get(topicResponse.topicId);
      if (!topic) continue;
      for (const partition of topicResponse.partitions) {
        const cursor = this.cursors.get(keyOf(topic, partition.partitionIndex));
        if (!cursor || cursor.offset !== requested.get(keyOf(topic, partition.partitionIndex))) continue;
        if (partition.errorCode === OFFSET_OUT_OF_RANGE) {
          // Compacted or deleted past our position: read on from the log's start.
          cursor.offset = partition.logStartOffset > cursor.offset ? partition.logStartOffset : cursor.offset;
          continue;
        }
        if (partition.errorCode !== 0) continue;
        answered.add(cursor);
        const read = readBatch(topic, partition, cursor.offset);
        if (read) batches.push({ ...read, cursor });
      }
    }
    if (failure !== undefined && answered.size === 0) {
      for (const cursor of cursors) cursor.busy = false;
      this.fetching.delete(leader);
      this.client.clearMetadata();
      this.retryLater(failure);
      return;
    }
    this.failures = 0;
    const broughtRecords = batches.some(({ batch }) => batch.messages.length > 0);
    this.broughtRecords.set(leader, broughtRecords);
    if (failure !== undefined) this.client.clearMetadata();
    // The leader is asked again once this fetch's batches are handled, for all its partitions at once: a fetch sent
    // meanwhile would leave the partitions being handled out of it until its long poll ends.
    const delivery = (batches.length > 0 ? this.deliver(batches.map(({ batch }) => batch)) : Promise.resolve()).then(
      () => {
        for (const { cursor, next } of batches) {
          // Repositioned (a new owner's seek) or dropped meanwhile: that position stands.
          if (this.cursors.get(keyOf(cursor.topic, cursor.partition)) === cursor) cursor.offset = next;
        }
      },
      (error: unknown) => {
        this.stopped = true;
        this.onError(error, true);
      },
    );
    this.deliveries.add(delivery);
    void delivery.finally(() => {
      for (const cursor of cursors) cursor.busy = false;
      this.deliveries.delete(delivery);
      this.fetching.delete(leader);
      this.pump();
    });
  }

  private retryLater(error: unknown): void {
    if (this.stopped || this.retryTimer) return;
    this.failures++;
    this.onError(error, false);
    const delay = Math.min(1_000, 50 * 2 ** Math.min(this.failures, 5));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.pump();
    }, delay);
  }
}

const keyOf = (topic: string, partition: number) => `${topic}:${partition}`;

type FetchedPartition = FetchResponse['responses'][number]['partitions'][number];

/**
 * The committed records of a partition's fetch from `from` on, and the position after it. An aborted transaction's
 * records are skipped from its first offset until its producer's abort marker, even when the marker lies beyond this
 * response, and for every aborted transaction of a producer, however many the response holds (the client's own filter
 * does neither: `UnfilteredConsumer` keeps it from seeing any).
 */
function readBatch(topic: string, partition: FetchedPartition, from: bigint): { batch: FetchedBatch; next: bigint } | undefined {
  const recordBatches = partition.records ?? [];
  if (recordBatches.length === 0) return undefined;
  const aborted = [...abortedTransactionsOf(partition)].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : 1));
  const abortedProducers = new Set<bigint>();
  const messages: FetchedRecord[] = [];
  let next = from;
  for (const recordBatch of recordBatches) {
    const lastOffset = recordBatch.firstOffset + BigInt(recordBatch.lastOffsetDelta);
    while (aborted.length > 0 && (aborted[0]?.firstOffset ?? 0n) <= lastOffset) abortedProducers.add(aborted.shift()!.producerId);
    if (lastOffset + 1n > next) next = lastOffset + 1n;
    if (recordBatch.attributes & IS_CONTROL) {
      // An abort marker (control type 0) ends its producer's aborted run.
      const type = recordBatch.records[0]?.key?.readInt16BE(2);
      if (type === 0) abortedProducers.delete(recordBatch.producerId);
      continue;
    }
    if (recordBatch.attributes & IS_TRANSACTIONAL && abortedProducers.has(recordBatch.producerId)) continue;
    for (const record of recordBatch.records) {
      const offset = recordBatch.firstOffset + BigInt(record.offsetDelta);
      if (offset < from) continue;
      const headers: Record<string, Buffer | undefined> = {};
      for (const [name, value] of record.headers) if (name) headers[name.toString()] = value ?? undefined;
      messages.push({ key: record.key, value: record.value, offset: offset.toString(), headers });
    }
  }
  if (next === from) return undefined;
  const last = (next - 1n).toString();
  return {
    batch: {
      topic,
      partition: partition.partitionIndex,
      messages,
      lastOffset: () => last,
      highWatermark: partition.lastStableOffset.toString(),
    },
    next,
  };
}
