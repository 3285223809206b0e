import { CommittedPositions, GroupCommit, MAX_PARTITIONS } from './group-commit.ts';
import {
  BATCHED_FETCH,
  disconnectQuietly,
  retryTransient,
  supervisedConsumer,
  transactionalProducer,
  type Admin,
  type FetchedBatch,
  type Consumer,
  type ConsumerRunConfig,
  type EachBatchPayload,
  type Kafka,
  type Producer,
} from './kafka.ts';
import type { PartSignals } from './supervisor.ts';

/**
 * One assigned input partition of a transactional part (Kafka Streams' `exactly_once`, v1): its own transactional
 * producer, whose id derives from the group and the partition, so whichever instance owns the partition is the only
 * one that can commit for it. Opening the producer fences the previous owner's (a zombie's next request fails) and
 * aborts its open transaction.
 */
export type PartitionTask = {
  topic: string;
  partition: number;
  producer: Producer;
  /** Batches handed over while this partition's transaction is in flight commit together in its next one. */
  group: GroupCommit<FetchedBatch>;
  committed: CommittedPositions;
  /** Settled once the producer is open and the task's own preparation (a state restore) is done. */
  ready: Promise<void>;
};

/** What a kind of part does with its partitions' tasks. */
export type TaskKind<T extends PartitionTask> = {
  /** The task's rounds: called with the batches of its partition that a group commit gathered. */
  run: (task: T, batches: FetchedBatch[]) => Promise<void>;
  /** Adds what a kind of part keeps per partition to a new task. */
  extend: (task: PartitionTask) => T;
  /**
   * Prepares newly assigned tasks together, once their producers are open (e.g. restores their state partitions).
   * `cancelled` aborts when the tasks are closed before they are ready: the preparation stops, and writes nothing more.
   */
  open?: (tasks: T[], cancelled: AbortSignal) => Promise<void>;
  /** Lets go of what a revoked task held (e.g. its partitions' snapshots). */
  close?: (task: T) => void;
  /** How the consumer fetches: `batched` when no request waits for the part's output (see BATCHED_FETCH). */
  fetch?: 'prompt' | 'batched';
};

type PartitionTaskOptions<T extends PartitionTask> = TaskKind<T> & {
  kafka: Kafka;
  groupId: string;
  /** The group's committed offsets (the next offset to read) of a topic's partitions; none where nothing is committed. */
  committedOffsets: (topic: string) => Promise<Map<number, bigint>>;
  /** A task that could not be opened: the part is broken and must be restarted. */
  failed: (error: unknown) => void;
};

const keyOf = (topic: string, partition: number) => `${topic}:${partition}`;

/** The transactional id of a partition's producer: stable across instances, so the next owner fences the last. */
const partitionTransactionalId = (groupId: string, topic: string, partition: number): string => `${groupId}.${topic}.${partition}`;

/** The tasks of the partitions a consumer has been assigned, opened on assignment and closed on revocation. */
class PartitionTasks<T extends PartitionTask> {
  private readonly tasks = new Map<string, T>();
  private closed = false;
  private readonly cancel = new AbortController();
  private assigning: Promise<void> = Promise.resolve();

  constructor(private readonly options: PartitionTaskOptions<T>) {}

  /**
   * Follows the consumer's assignment (kafkajs's GROUP_JOIN, before it fetches for it), one assignment after the other:
   * revoked tasks close once their round in flight is over (`revokeAll`: every task, as if all were revoked); new ones
   * open together. Resolves when every assigned task is ready.
   */
  assign(assignment: Record<string, number[] | undefined>, revokeAll = false): Promise<void> {
    // Revoked tasks leave at once, even while one is still opening: its failure no longer breaks the part.
    const revoked = this.revoke(assignment, revokeAll);
    const applied = this.assigning.then(() => this.apply(assignment, revokeAll, revoked));
    this.assigning = applied.catch(() => undefined);
    return applied;
  }

  /** Takes the tasks an assignment no longer holds (every task, with `revokeAll`) out of the map. */
  private revoke(assignment: Record<string, number[] | undefined>, revokeAll: boolean): T[] {
    const assigned = new Set(Object.entries(assignment).flatMap(([topic, partitions]) => (partitions ?? []).map((p) => keyOf(topic, p))));
    const revoked = [...this.tasks].filter(([key]) => revokeAll || !assigned.has(key));
    for (const [key] of revoked) this.tasks.delete(key);
    return revoked.map(([, task]) => task);
  }

  /** The task of a batch's partition; none for a partition this consumer is not (or no longer, or not yet) assigned. */
  taskFor(topic: string, partition: number): T | undefined {
    return this.tasks.get(keyOf(topic, partition));
  }

  private async apply(assignment: Record<string, number[] | undefined>, revokeAll: boolean, revoked: T[]): Promise<void> {
    // Tasks an earlier assignment opened after this one arrived are revoked now.
    const closing = [...revoked, ...this.revoke(assignment, revokeAll)];
    await Promise.all(closing.map((task) => this.close(task)));
    if (this.closed) return;
    const added = Object.entries(assignment).flatMap(([topic, partitions]) =>
      (partitions ?? []).filter((partition) => !this.tasks.has(keyOf(topic, partition))).map((partition) => ({ topic, partition })),
    );
    this.openAll(added);
    await Promise.all([...this.tasks.values()].map((task) => task.ready));
  }

  /** The part is stopping: no task opens from now on, and those still opening are cancelled. */
  stopOpening(): void {
    this.closed = true;
    this.cancel.abort();
  }

  /**
   * Closes every task (the part stops: its consumer has stopped first). A part starts again with new tasks: a task of
   * this incarnation that fails to open from now on no longer reports it.
   */
  async closeAll(): Promise<void> {
    this.stopOpening();
    const tasks = [...this.tasks.values()];
    this.tasks.clear();
    await Promise.all(tasks.map((task) => this.close(task)));
    // Revoked tasks whose assignment was still queued are closed by it.
    await this.assigning;
  }

  private openAll(partitions: { topic: string; partition: number }[]): void {
    if (partitions.length === 0) return;
    const { kafka, groupId, extend, open, failed, committedOffsets } = this.options;
    let settle!: { resolve: () => void; reject: (error: unknown) => void };
    const ready = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    const tasks = partitions.map(({ topic, partition }) => {
      const task = extend({
        topic,
        partition,
        producer: transactionalProducer(kafka, partitionTransactionalId(groupId, topic, partition)),
        group: new GroupCommit<FetchedBatch>((batches) => this.options.run(task, batches)),
        committed: new CommittedPositions(),
        ready,
      });
      this.tasks.set(keyOf(topic, partition), task);
      return task;
    });
    void (async () => {
      // Every connect settled before any is given up: a producer closed while connecting would go on to fence.
      const connects = await Promise.allSettled(tasks.map((task) => task.producer.connect()));
      for (const connect of connects) if (connect.status === 'rejected') throw connect.reason;
      await open?.(tasks, this.cancel.signal);
      this.cancel.signal.throwIfAborted();
      await this.skipCommitted(tasks, committedOffsets);
    })().then(settle.resolve, settle.reject);
    // Whoever waits for a task learns of the failure too. Only a task still assigned breaks the part: one revoked
    // meanwhile (its new owner's producer fenced this one's, say) is simply closed.
    ready.catch((error: unknown) => {
      if (!this.closed && tasks.some((task) => this.tasks.get(keyOf(task.topic, task.partition)) === task)) failed(error);
    });
  }

  /**
   * The consumer took its fetch positions from the group's offsets when it was assigned, which may have been before the
   * previous owner's last transaction completed (kafkajs's OffsetFetch cannot ask for stable offsets, KIP-447). Once the
   * new producers have fenced that owner, read them again: what they now cover was decided, and is passed over.
   */
  private async skipCommitted(tasks: T[], committedOffsets: (topic: string) => Promise<Map<number, bigint>>): Promise<void> {
    for (const topic of new Set(tasks.map((task) => task.topic))) {
      const offsets = await committedOffsets(topic);
      for (const task of tasks) {
        const next = task.topic === topic ? offsets.get(task.partition) : undefined;
        if (next !== undefined) task.committed.passOver(topic, task.partition, next);
      }
    }
  }

  private async close(task: T): Promise<void> {
    await task.ready.catch(() => undefined);
    await task.group.idle();
    this.options.close?.(task);
    await disconnectQuietly(task.producer);
  }
}

/**
 * How a consumer hands its batches to its partitions' tasks: every assigned partition at once, each batch to its
 * partition's group commit, a batch's offset resolved once its transaction has committed. While a task is still
 * opening (restoring its state), the consumer keeps heartbeating.
 */
const partitionTaskRun = <T extends PartitionTask>(tasks: PartitionTasks<T>): ConsumerRunConfig => ({
  autoCommit: false,
  eachBatchAutoResolve: false,
  partitionsConsumedConcurrently: MAX_PARTITIONS,
  eachBatch: async ({ batch, resolveOffset, heartbeat }: EachBatchPayload): Promise<void> => {
    // A batch of a partition without a task is not this consumer's to decide (a fetch that outlived a revocation):
    // opening a producer for it would fence its owner. Left unresolved, it is fetched again if the partition is ours.
    const task = tasks.taskFor(batch.topic, batch.partition);
    if (batch.messages.length === 0 || !task) return;
    await whileHeartbeating(task.ready, heartbeat);
    await task.group.submit(batch);
    resolveOffset(batch.lastOffset());
    await heartbeat();
  },
});

/** kafkajs heartbeats only between batches: a restore longer than the session would cost the partitions. */
async function whileHeartbeating(work: Promise<void>, heartbeat: () => Promise<void>): Promise<void> {
  let done = false;
  const finished = work.finally(() => {
    done = true;
  });
  while (!done) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([finished, new Promise((resolve) => (timer = setTimeout(resolve, 1_000)))]);
    clearTimeout(timer);
    if (!done) await heartbeat();
  }
  await finished;
}

/**
 * A transactional part's consumer and its partitions' tasks, both new at each start. The part is running once the
 * tasks of every partition of its assignment are ready.
 */
export class PartitionedConsumer<T extends PartitionTask> {
  private consumer?: Consumer;
  private admin?: Admin;
  private tasks?: PartitionTasks<T>;
  private started?: () => void;
  /** The last stop, in full: a new run never overlaps an old one still closing its tasks (and their stores). */
  private stopping: Promise<void> = Promise.resolve();
  private stops = 0;

  constructor(
    private readonly kafka: Kafka,
    private readonly groupId: string,
    private readonly signals: PartSignals,
    private readonly kind: TaskKind<T>,
  ) {}

  /**
   * Resolves once the first assignment's tasks are ready (their state restored), or once the part has failed (its
   * supervisor then restarts it) or been stopped.
   */
  async start(topics: string[]): Promise<void> {
    const stops = this.stops;
    const stopped = () => this.stops !== stops;
    await this.stopping;
    // Stopped while it waited (the service is shutting down): nothing to start.
    if (stopped()) return;
    const { kafka, groupId, signals } = this;
    const started = new Promise<void>((resolve) => {
      this.started = resolve;
    });
    const failed = (error: unknown) => {
      this.started?.();
      signals.failed(error);
    };
    const admin = kafka.admin();
    const committedOffsets = async (topic: string) => {
      const [fetched] = await retryTransient(() => admin.fetchOffsets({ groupId, topics: [topic] }));
      const offsets = new Map<number, bigint>();
      for (const { partition, offset } of fetched?.partitions ?? []) if (BigInt(offset) >= 0n) offsets.set(partition, BigInt(offset));
      return offsets;
    };
    const tasks = new PartitionTasks<T>({ ...this.kind, kafka, groupId, failed, committedOffsets });
    const fetch = this.kind.fetch === 'batched' ? BATCHED_FETCH : {};
    const consumer = supervisedConsumer(kafka, { groupId, readUncommitted: false, ...fetch }, { running: () => undefined, failed });
    let memberId: string | undefined;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      // A new member id: this consumer was out of the group (its session expired, say while the process was paused),
      // and its partitions may have been decided elsewhere since. Only a member that stayed keeps its tasks.
      const rejoined = memberId !== undefined && memberId !== payload.memberId;
      memberId = payload.memberId;
      tasks.assign(payload.memberAssignment, rejoined).then(
        () => {
          if (this.tasks !== tasks) return;
          this.started?.();
          signals.running();
        },
        () => undefined,
      );
    });
    try {
      await admin.connect();
      await consumer.connect();
      for (const topic of topics) await consumer.subscribe({ topic, fromBeginning: true });
    } catch (error) {
      await disconnectQuietly(consumer, admin);
      throw error;
    }
    // A stop that came while connecting did not know these clients: they are this start's to close.
    if (stopped()) {
      await disconnectQuietly(consumer, admin);
      return;
    }
    this.admin = admin;
    this.tasks = tasks;
    this.consumer = consumer;
    await consumer.run(partitionTaskRun(tasks));
    await started;
  }

  stop(): Promise<void> {
    const { consumer, admin, tasks } = this;
    this.stops++;
    this.consumer = undefined;
    this.admin = undefined;
    this.tasks = undefined;
    this.started?.();
    // Tasks still opening are cancelled first: the consumer's disconnect waits for the batches that wait for them.
    tasks?.stopOpening();
    const earlier = this.stopping;
    this.stopping = (async () => {
      await disconnectQuietly(consumer);
      await tasks?.closeAll();
      await disconnectQuietly(admin);
      await earlier;
    })();
    return this.stopping;
  }
}
