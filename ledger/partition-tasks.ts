import { randomUUID } from 'node:crypto';
import { CommittedPositions, GroupCommit } from './group-commit.ts';
import {
  BATCHED_FETCH,
  disconnectQuietly,
  GroupConsumer,
  isBrokerAway,
  isTransientTransactionError,
  kafkaErrorType,
  retryKafka,
  PROMPT_FETCH,
  TransactionAborted,
  transactionalProducer,
  type Assignment,
  type FetchedBatch,
  type GroupMember,
  type Kafka,
  type TransactionalProducer,
} from './kafka.ts';
import { sleep } from './sleep.ts';
import type { PartSignals } from './supervisor.ts';

/**
 * One assigned input partition of a transactional part: what the part keeps for it (its state, restored when the
 * partition is assigned) and how far this instance has committed it. The partitions of an instance share one
 * transactional producer and one transaction per round (KIP-447, Kafka Streams' `exactly_once_v2`): the round's
 * offsets are committed with the group member's generation, so an instance the group has moved on from cannot commit.
 */
export type PartitionTask = {
  topic: string;
  partition: number;
  committed: CommittedPositions;
  /** Settled once the task's own preparation (a state restore) is done. */
  ready: Promise<void>;
};

/** A batch of one partition, for its task. */
export type TaskBatch<T extends PartitionTask> = { task: T; batch: FetchedBatch };

/** What a round commits through: the instance's producer, as the group member that fetched its batches. */
export type RoundContext = { producer: TransactionalProducer; member: GroupMember };

/** What a kind of part does with its partitions' tasks. */
export type TaskKind<T extends PartitionTask> = {
  /** A round: the batches (of any of the instance's partitions) that a group commit gathered, in one transaction. */
  run: (round: TaskBatch<T>[], context: RoundContext) => Promise<void>;
  /** Adds what a kind of part keeps per partition to a new task. */
  extend: (task: PartitionTask) => T;
  /**
   * Prepares newly assigned tasks together (e.g. restores their state partitions), through the instance's producer.
   * `cancelled` aborts when the tasks are closed before they are ready: the preparation stops, and writes nothing more.
   */
  open?: (tasks: T[], producer: TransactionalProducer, cancelled: AbortSignal) => Promise<void>;
  /** Lets go of what a revoked task held (e.g. its partitions' snapshots). */
  close?: (task: T) => void;
  /** How the consumer fetches: `batched` when no request waits for the part's output (see BATCHED_FETCH). */
  fetch?: 'prompt' | 'batched';
};

const keyOf = (topic: string, partition: number) => `${topic}:${partition}`;

/**
 * While no broker answers, or a transaction coordinator is not there yet (the transaction log being created or loaded
 * on a new or restarted broker) or still completing the previous incarnation's transaction (CONCURRENT_TRANSACTIONS), the producer is opened again every second at most, for as long as the part is not
 * stopped: a part restarted during an outage is back within a second of the broker's return, not after its
 * supervisor's backoff.
 */
const untilBrokersAnswer =
  (stopped: () => boolean) =>
  (attempt: number, error: unknown): number | undefined =>
    !stopped() && (isBrokerAway(error) || isTransientTransactionError(error)) ? Math.min(1_000, 50 * (attempt + 1)) : undefined;

/**
 * Errors of a round whose group moved on while it ran (a member joined or left): its transaction is aborted and its
 * partitions, where still this instance's, are read again from what the group committed. Nothing was decided.
 */
const GENERATION_MOVED = new Set(['ILLEGAL_GENERATION', 'UNKNOWN_MEMBER_ID', 'REBALANCE_IN_PROGRESS']);
export const isGenerationMoved = (error: unknown): boolean => GENERATION_MOVED.has(String(kafkaErrorType(error)));

/** What a broker answers while a partition's leader moves (a broker restarting or lost): the client's retries ran out. */
const LEADER_MOVING = new Set([
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_OR_FOLLOWER',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'REQUEST_TIMED_OUT',
]);

/**
 * A round the cluster refused for now (a broker away, a coordinator or a leader moving) and whose transaction was
 * aborted: nothing of it was written and nothing of it is remembered (a round's state is kept only once committed), so
 * its partitions are read again from what the group committed and decided again, without restarting the part (which
 * would restore every partition's state). A failure of any other kind, or one whose transaction's outcome is unknown
 * (the abort or the commit failed), still restarts the part.
 */
export const isRetriableRound = (error: unknown): boolean =>
  isGenerationMoved(error) ||
  (error instanceof TransactionAborted &&
    (isBrokerAway(error) || isTransientTransactionError(error) || LEADER_MOVING.has(String(kafkaErrorType(error)))));

/** How long a round refused for now waits before its partitions are read again: the cluster needs a moment. */
const REFUSED_ROUND_PAUSE_MS = 250;

/** One transaction at a time on the instance's producer: rounds and the barriers of new partitions take turns. */
class Exclusive {
  private tail: Promise<unknown> = Promise.resolve();

  run<R>(work: () => Promise<R>): Promise<R> {
    const result = this.tail.then(work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** The tasks of the partitions a consumer has been assigned, opened on assignment and closed on revocation. */
class PartitionTasks<T extends PartitionTask> {
  private readonly tasks = new Map<string, T>();
  private closed = false;
  private readonly cancel = new AbortController();

  private readonly kind: TaskKind<T>;
  private readonly producer: TransactionalProducer;
  private readonly exclusive: Exclusive;
  private readonly failed: (error: unknown) => void;
  private readonly readied: () => void;

  constructor(
    kind: TaskKind<T>,
    producer: TransactionalProducer,
    exclusive: Exclusive,
    failed: (error: unknown) => void,
    readied: () => void,
  ) {
    this.kind = kind;
    this.producer = producer;
    this.exclusive = exclusive;
    this.failed = failed;
    this.readied = readied;
  }

  /**
   * Follows the consumer's assignment: revoked tasks close, new ones open together (`revokeAll`: every task is new, as
   * after a membership that lapsed, whose partitions may have been decided elsewhere meanwhile).
   */
  assign(assignment: Assignment, revokeAll: boolean): void {
    const assigned = new Set(Object.entries(assignment).flatMap(([topic, partitions]) => partitions.map((p) => keyOf(topic, p))));
    for (const [key, task] of [...this.tasks]) {
      if (!revokeAll && assigned.has(key)) continue;
      this.tasks.delete(key);
      this.kind.close?.(task);
    }
    if (this.closed) return;
    const added = Object.entries(assignment).flatMap(([topic, partitions]) =>
      partitions.filter((partition) => !this.tasks.has(keyOf(topic, partition))).map((partition) => ({ topic, partition })),
    );
    this.openAll(added);
    void Promise.all([...this.tasks.values()].map((task) => task.ready)).then(
      () => this.readied(),
      () => undefined,
    );
  }

  /** The task of a batch's partition; none for a partition this consumer is not (or no longer) assigned. */
  taskFor(topic: string, partition: number): T | undefined {
    return this.tasks.get(keyOf(topic, partition));
  }

  /** Whether `task` is still the task of its partition (not revoked meanwhile). */
  holds(task: T): boolean {
    return this.tasks.get(keyOf(task.topic, task.partition)) === task;
  }

  /** Closes every task (the part stops): none opens from now on, and those still opening are cancelled. */
  closeAll(): void {
    this.closed = true;
    this.cancel.abort();
    for (const task of this.tasks.values()) this.kind.close?.(task);
    this.tasks.clear();
  }

  private openAll(partitions: { topic: string; partition: number }[]): void {
    if (partitions.length === 0) return;
    let settle!: { resolve: () => void; reject: (error: unknown) => void };
    const ready = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    const tasks = partitions.map(({ topic, partition }) => {
      const task = this.kind.extend({ topic, partition, committed: new CommittedPositions(), ready });
      this.tasks.set(keyOf(topic, partition), task);
      return task;
    });
    const { open } = this.kind;
    (open ? this.exclusive.run(() => open(tasks, this.producer, this.cancel.signal)) : Promise.resolve()).then(
      settle.resolve,
      settle.reject,
    );
    // Whoever waits for a task learns of the failure too. Only a task still assigned breaks the part.
    ready.catch((error: unknown) => {
      if (!this.closed && tasks.some((task) => this.holds(task))) this.failed(error);
    });
  }
}

/**
 * A transactional part's consumer, its producer and its partitions' tasks, all new at each start. Batches of every
 * assigned partition go to one group commit: a round spans the partitions whose batches arrived together and commits
 * once. The part is running once the tasks of its assignment are ready.
 */
export class PartitionedConsumer<T extends PartitionTask> {
  private consumer?: GroupConsumer;
  private producer?: TransactionalProducer;
  private tasks?: PartitionTasks<T>;
  /** The last stop, in full: a new run never overlaps an old one still closing. */
  private stopping: Promise<void> = Promise.resolve();
  private stops = 0;
  /** A round failed in a way that leaves its transaction's outcome unknown: no round runs until the part restarts. */
  private failure?: unknown;

  private readonly kafka: Kafka;
  private readonly groupId: string;
  private readonly signals: PartSignals;
  private readonly kind: TaskKind<T>;

  constructor(kafka: Kafka, groupId: string, signals: PartSignals, kind: TaskKind<T>) {
    this.kafka = kafka;
    this.groupId = groupId;
    this.signals = signals;
    this.kind = kind;
  }

  /**
   * Resolves once the producer is open (fencing this instance's previous incarnation) and the group joined; the part
   * reports running once the first assignment's tasks are ready.
   */
  async start(topics: string[]): Promise<void> {
    const stops = this.stops;
    await this.stopping;
    if (this.stops !== stops) return;
    this.failure = undefined;
    const { kafka, groupId, signals } = this;
    const exclusive = new Exclusive();
    // Stable per instance, so a restart of the same instance fences its previous incarnation and aborts what it left open.
    const producer = transactionalProducer(kafka, `${groupId}.${kafka.instanceId ?? randomUUID()}`);
    const failed = (error: unknown) => {
      if (this.producer === producer) signals.failed(error);
    };
    const tasks = new PartitionTasks<T>(this.kind, producer, exclusive, failed, () => {
      if (this.tasks === tasks) signals.running();
    });
    const group = new GroupCommit<TaskBatch<T> & { member: GroupMember }>((round) => this.runRound(round, producer, exclusive, tasks));
    const consumer = new GroupConsumer(kafka, {
      groupId,
      topics,
      ...(kafka.instanceId ? { instanceId: kafka.instanceId } : {}),
      fetch: this.kind.fetch === 'batched' ? BATCHED_FETCH : PROMPT_FETCH,
      onAssignment: (assignment, _member, rejoined) => tasks.assign(assignment, rejoined),
      eachBatch: async (batch, member) => {
        // A batch of a partition without a task is not this consumer's to decide (a fetch that outlived a revocation).
        const task = tasks.taskFor(batch.topic, batch.partition);
        if (!task || batch.messages.length === 0) return;
        await task.ready;
        try {
          await group.submit({ task, batch, member });
        } catch (error) {
          if (!isRetriableRound(error) || this.failure !== undefined) throw error;
          if (!isGenerationMoved(error)) await sleep(REFUSED_ROUND_PAUSE_MS);
          // Read the partition again from what the group committed, before the fetcher moves on past this batch.
          if (tasks.holds(task)) await consumer.rewind(batch.topic, batch.partition);
        }
      },
      onFailure: failed,
    });
    // Set before the group is joined: an assignment (an empty one, say) may be ready before `start` returns.
    this.producer = producer;
    this.consumer = consumer;
    this.tasks = tasks;
    try {
      await retryKafka(
        () => producer.connect(),
        untilBrokersAnswer(() => this.stops !== stops),
      );
      await consumer.start();
    } catch (error) {
      if (this.producer === producer) {
        this.producer = undefined;
        this.consumer = undefined;
        this.tasks = undefined;
      }
      tasks.closeAll();
      await consumer.stop().catch(() => undefined);
      await disconnectQuietly(producer);
      throw error;
    }
  }

  stop(): Promise<void> {
    const { consumer, producer, tasks } = this;
    this.stops++;
    this.consumer = undefined;
    this.producer = undefined;
    this.tasks = undefined;
    const earlier = this.stopping;
    this.stopping = (async () => {
      tasks?.closeAll();
      await consumer?.stop().catch(() => undefined);
      await disconnectQuietly(producer);
      await earlier;
    })();
    return this.stopping;
  }

  /**
   * Runs one round: its batches of partitions still this instance's, as the member that fetched the first of them. A
   * round that fails because the group moved on, or that the cluster refused for now and was aborted
   * (`isRetriableRound`), is reported to its batches (which rewind); any other failure may leave the transaction's
   * outcome unknown, so the part stops taking rounds and is restarted.
   */
  private async runRound(
    round: (TaskBatch<T> & { member: GroupMember })[],
    producer: TransactionalProducer,
    exclusive: Exclusive,
    tasks: PartitionTasks<T>,
  ): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    const held = round.filter(({ task }) => tasks.holds(task));
    const member = held[0]?.member;
    if (!member) return;
    try {
      await exclusive.run(() =>
        this.kind.run(
          held.map(({ task, batch }) => ({ task, batch })),
          { producer, member },
        ),
      );
    } catch (error) {
      if (!isRetriableRound(error)) {
        this.failure = error;
        if (this.producer === producer) this.signals.failed(error);
      }
      throw error;
    }
  }
}
