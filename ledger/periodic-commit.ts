import { GroupConsumer, type FetchedBatch, type GroupConsumerOptions, type Kafka, type TopicOffsets } from './kafka.ts';
import type { PartSignals } from './supervisor.ts';

/** How often a consumer on periodic commits commits its group offsets. */
export const OFFSET_COMMIT_INTERVAL_MS = 5_000;

/**
 * Commits a consumer's group offsets every few seconds instead of after every batch (a commit per batch cost 1.7
 * OffsetCommit requests per product write). For a consumer whose real position is kept elsewhere (a projection's
 * checkpoints) or whose re-read is harmless (replies): after a crash it reads at most an interval's worth again. A
 * batch counts once its handler reports it `processed`, so nothing unapplied is committed.
 */
export class PeriodicCommit {
  private readonly processed = new Map<string, { topic: string; partition: number; offset: string }>();
  private timer?: NodeJS.Timeout;

  private readonly commit: (offsets: TopicOffsets[]) => Promise<void>;
  private readonly intervalMs: number;
  private readonly onError: (error: unknown) => void;

  constructor(commit: (offsets: TopicOffsets[]) => Promise<void>, intervalMs: number, onError: (error: unknown) => void) {
    this.commit = commit;
    this.intervalMs = intervalMs;
    this.onError = onError;
  }

  /** A batch has been handled: its offsets are committed with the next flush. */
  done(batch: Pick<FetchedBatch, 'topic' | 'partition' | 'lastOffset'>): void {
    const next = (BigInt(batch.lastOffset()) + 1n).toString();
    this.processed.set(`${batch.topic}|${batch.partition}`, { topic: batch.topic, partition: batch.partition, offset: next });
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  /** Commits what was processed since the last commit; a partition the group took away meanwhile is its next owner's. */
  async flush(): Promise<void> {
    if (this.processed.size === 0) return;
    const offsets = [...this.processed.values()];
    this.processed.clear();
    try {
      await this.commit(offsets.map(({ topic, partition, offset }) => ({ topic, partitions: [{ partition, offset }] })));
    } catch (error) {
      this.onError(error);
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

/**
 * A supervised part's group consumer on periodic commits: each batch counts once `eachBatch` has handled it; the part
 * runs once the group is joined and restarts when the consumer breaks. `start` joins and starts the commits.
 */
export function periodicallyCommitting(
  kafka: Kafka,
  options: Omit<GroupConsumerOptions, 'onJoin' | 'onFailure'>,
  signals: PartSignals,
  onCommitError: (error: unknown) => void,
): { consumer: GroupConsumer; commits: PeriodicCommit; start: () => Promise<void> } {
  const commits = new PeriodicCommit((offsets) => consumer.commitOffsets(offsets), OFFSET_COMMIT_INTERVAL_MS, onCommitError);
  const consumer = new GroupConsumer(kafka, {
    ...options,
    eachBatch: async (batch, member) => {
      await options.eachBatch(batch, member);
      commits.done(batch);
    },
    onJoin: () => signals.running(),
    onFailure: (error) => signals.failed(error),
  });
  const start = async () => {
    await consumer.start();
    commits.start();
  };
  return { consumer, commits, start };
}
