import type { FetchedBatch, OutgoingRecord, TopicOffsets } from './kafka.ts';

/**
 * Group commit for a consumer reading several partitions: batches handed over while a transaction is in
 * flight wait and commit together in the next one, so a round of fetches pays for one transaction rather
 * than one per partition. Groups run one at a time, in the order their batches arrived; every batch of a
 * group shares its outcome (committed, or the error that aborted it).
 */
export class GroupCommit<T> {
  private queue: { item: T; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private draining?: Promise<void>;

  private readonly commit: (items: T[]) => Promise<void>;

  constructor(commit: (items: T[]) => Promise<void>) {
    this.commit = commit;
  }

  submit(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.draining ??= this.drain();
    });
  }

  /** Settles once nothing is queued or in flight. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        // The other partitions of the same fetch are handed over in the next turns of the event loop.
        await new Promise((resolve) => setImmediate(resolve));
        const group = this.queue.splice(0);
        try {
          await this.commit(group.map(({ item }) => item));
          for (const { resolve } of group) resolve();
        } catch (error) {
          for (const { reject } of group) reject(error);
        }
      }
    } finally {
      this.draining = undefined;
    }
  }
}

/** The most partitions a topic the service creates may have (TOPIC_PARTITIONS). */
export const MAX_PARTITIONS = 64;

/** The offsets to commit once a group of batches is done: per topic and partition, past its last message. */
export function consumedOffsets(batches: Pick<FetchedBatch, 'topic' | 'partition' | 'lastOffset'>[]): TopicOffsets[] {
  const next = new Map<string, Map<number, bigint>>();
  for (const batch of batches) {
    const partitions = next.get(batch.topic) ?? new Map<number, bigint>();
    const offset = BigInt(batch.lastOffset()) + 1n;
    if (offset > (partitions.get(batch.partition) ?? -1n)) partitions.set(batch.partition, offset);
    next.set(batch.topic, partitions);
  }
  return [...next].map(([topic, partitions]) => ({
    topic,
    partitions: [...partitions].map(([partition, offset]) => ({ partition, offset: offset.toString() })),
  }));
}

/** Splits items, in order, into runs whose sizes add up to at most `limit` (an item larger than that runs alone). */
export function chunkBySize<T>(items: T[], sizeOf: (item: T) => number, limit: number): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let used = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (current.length > 0 && used + size > limit) {
      chunks.push(current);
      current = [];
      used = 0;
    }
    current.push(item);
    used += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** A record's weight against the record limit: key, value and a margin for headers and framing. */
export const recordBytes = (message: Pick<OutgoingRecord, 'key' | 'value'>): number =>
  (message.value ? Buffer.byteLength(message.value) : 0) + (message.key ? Buffer.byteLength(message.key) : 0) + 128;

/**
 * The offsets this process has committed, per topic and partition. When a group commits in several rounds and a
 * later round fails, the consumer hands the same batches over again: what an earlier round committed is skipped.
 */
export class CommittedPositions {
  private readonly next = new Map<string, bigint>();

  covers(topic: string, partition: number, offset: string): boolean {
    return BigInt(offset) < (this.next.get(`${topic}:${partition}`) ?? 0n);
  }

  /** Offsets below `next` of the partition are covered (committed elsewhere, or earlier). */
  passOver(topic: string, partition: number, next: bigint): void {
    const key = `${topic}:${partition}`;
    if (next > (this.next.get(key) ?? 0n)) this.next.set(key, next);
  }

  advance(consumed: Pick<FetchedBatch, 'topic' | 'partition' | 'lastOffset'>[]): void {
    for (const { topic, partitions } of consumedOffsets(consumed)) {
      for (const { partition, offset } of partitions) {
        const key = `${topic}:${partition}`;
        if (BigInt(offset) > (this.next.get(key) ?? 0n)) this.next.set(key, BigInt(offset));
      }
    }
  }
}
