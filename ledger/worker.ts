import { BATCHED_FETCH, GroupConsumer, PROMPT_FETCH, type FetchedBatch, type FetchedRecord } from './kafka.ts';
import type { Logger } from './logger.ts';
import type { Worker, WorkerDeps } from './runtime.ts';
import { sleep } from './sleep.ts';
import { backoffDelay, type Part, type PartSignals } from './supervisor.ts';
import { errorField, ThrottledLog } from './throttled-log.ts';
import { namespaced, type TopicSpec } from './topics.ts';
import { WakeUp } from './wake-up.ts';

/**
 * A read model as the queue: the worker's `round` reads what is due. A listed projection's progress wakes it at once
 * (unless the `news` hook says it does not concern the worker); without news it looks again every `idlePollMs`.
 */
export type QueueSource = { kind: 'queue'; wokenBy: string[]; idlePollMs: number };

/**
 * A topic read in the worker's own consumer group (its name namespaced), from the beginning, read-committed.
 * `each-slice`: up to `recordsAtOnce` consecutive records of a partition go to `handleSlice` at once; their offsets are
 * committed once it returned; a failure retries the same slice in place with backoff (its partition waits;
 * `partitionsAtOnce` partitions side by side; the hook skips what it had finished). `manual`: each batch goes to
 * `handleBatch`, and the worker commits what it has finished itself (`commit`).
 */
export type TopicSource = {
  kind: 'topic';
  groupId: string;
  topics: TopicSpec[];
  /** `batched`: nobody waits on this worker, so it fetches large batches (BATCHED_FETCH). */
  fetch: 'prompt' | 'batched';
  commit: { kind: 'each-slice'; partitionsAtOnce: number; recordsAtOnce: number } | { kind: 'manual' };
};

/** A record of a topic as a worker sees it: the Kafka client stays in ledger/. */
export type TopicMessage = {
  topic: string;
  partition: number;
  offset: string;
  value: Buffer | null;
  header(name: string): string | undefined;
};
export type TopicBatch = { topic: string; partition: number; messages: TopicMessage[]; lastOffset: string };
export type TopicOffset = { topic: string; partition: number; offset: string };

/** What a worker's hooks are handed once, for the life of the worker. */
export type WorkerContext = {
  deps: WorkerDeps;
  log: Logger;
  throttled: ThrottledLog;
  /** Starts the next round at once (or, with nobody waiting, the one after the current). */
  wake: () => void;
  /** True from the moment the worker is asked to stop. */
  stopping: () => boolean;
  /** `manual` commit: commits the offsets (the next to read) of what the worker has finished. */
  commit: (offsets: TopicOffset[]) => Promise<void>;
};

export type WorkerHooks = {
  /** Before the source starts: the clients of this incarnation, made afresh after every (re)start. */
  open?: () => Promise<void>;
  /**
   * One round of the worker's own loop (a queue's claims; beside a topic, its scheduled work). Answers how long to wait
   * for news at most before the next round: 0 goes on at once, undefined waits the idle poll (1 s beside a topic).
   */
  round?: () => Promise<number | void>;
  /** A queue's projection has applied more of a topic (namespaced): whether to wake the worker (default yes). */
  news?: (projection: string, topic: string) => boolean;
  /** `each-slice` topic source: consecutive records of one partition, done when it returns; a throw retries them all. */
  handleSlice?: (messages: TopicMessage[]) => Promise<void>;
  /** `manual` topic source: one batch. */
  handleBatch?: (batch: TopicBatch) => Promise<void>;
  /** A failed round (then the loop pauses a second) or a failed `handleSlice` (then it backs off and retries the slice). */
  onError: (error: unknown, failed: { attempt: number; message?: TopicMessage }) => void;
  /** The stop has begun: abort what need not finish (a delivery the next start repeats). */
  stopping?: () => void;
  /** The loop has ended: what is in flight finishes (or is left to its lease) before the source closes. */
  drain?: () => Promise<void>;
  /** After the source closed: the incarnation's clients. */
  close?: () => Promise<void>;
};

export type WorkerSpec = {
  name: string;
  /** The `component` of its log lines. */
  component: string;
  source: QueueSource | TopicSource;
  /** Called once per worker; the hooks keep the worker's state across its restarts, and make clients in `open`. */
  hooks: (context: WorkerContext) => WorkerHooks;
};

const ROUND_RETRY_MS = 1_000;
const TOPIC_LOOP_POLL_MS = 1_000;

/** Every background part of the service in one shape: a source and hooks; start/stop, wake-up and backoff written once. */
export const defineWorker = (spec: WorkerSpec): Worker => ({
  name: spec.name,
  create: (deps, signals) => new WorkerPart(spec, deps, signals),
});

class WorkerPart implements Part {
  private halted = false;
  private loop?: Promise<void>;
  private consumer?: GroupConsumer;
  private unsubscribe: (() => void)[] = [];
  private readonly wakeUp = new WakeUp();
  private readonly hooks: WorkerHooks;
  private readonly throttled: ThrottledLog;

  private readonly spec: WorkerSpec;
  private readonly deps: WorkerDeps;
  private readonly signals: PartSignals;

  constructor(spec: WorkerSpec, deps: WorkerDeps, signals: PartSignals) {
    this.spec = spec;
    this.deps = deps;
    this.signals = signals;

    const log = deps.logger.child({ component: spec.component });
    this.throttled = new ThrottledLog(log);
    this.hooks = spec.hooks({
      deps,
      log,
      throttled: this.throttled,
      wake: this.wakeUp.wake,
      stopping: () => this.halted,
      commit: (offsets) => this.commit(offsets),
    });
  }

  async start(): Promise<void> {
    this.halted = false;
    await this.hooks.open?.();
    const { source } = this.spec;
    if (source.kind === 'queue') {
      this.unsubscribe = source.wokenBy.map((projection) =>
        this.deps.onProgress(projection, (topic) => {
          if (this.hooks.news?.(projection, topic) ?? true) this.wakeUp.wake();
        }),
      );
      this.loop = this.run(source.idlePollMs);
      this.signals.running();
      return;
    }
    await this.consume(source);
    if (this.hooks.round) this.loop = this.run(TOPIC_LOOP_POLL_MS);
  }

  async stop(): Promise<void> {
    this.halted = true;
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    this.unsubscribe = [];
    this.hooks.stopping?.();
    this.wakeUp.wake();
    await this.loop;
    await this.hooks.drain?.();
    const consumer = this.consumer;
    this.consumer = undefined;
    await consumer?.stop().catch(() => undefined);
    await this.hooks.close?.();
  }

  private async run(idlePollMs: number): Promise<void> {
    while (!this.halted) {
      let waitMs: number | void = undefined;
      try {
        waitMs = await this.hooks.round?.();
      } catch (error) {
        this.hooks.onError(error, { attempt: 0 });
        await sleep(ROUND_RETRY_MS);
      }
      if (waitMs !== 0 && !this.halted) await this.wakeUp.wait(waitMs ?? idlePollMs);
    }
  }

  private async consume(source: TopicSource): Promise<void> {
    const { kafka, namespace } = this.deps;
    const { commit } = source;
    const handle = commit.kind === 'manual' ? this.batchHandler() : this.sliceHandler(commit.partitionsAtOnce, commit.recordsAtOnce);
    const consumer: GroupConsumer = new GroupConsumer(kafka, {
      groupId: namespaced(namespace, source.groupId),
      topics: source.topics.map((topic) => namespaced(namespace, topic.name)),
      ...(kafka.instanceId ? { instanceId: kafka.instanceId } : {}),
      fetch: source.fetch === 'batched' ? BATCHED_FETCH : PROMPT_FETCH,
      eachBatch: (batch) => handle(batch, consumer),
      onJoin: () => this.signals.running(),
      onFailure: (error) => this.signals.failed(error),
    });
    this.consumer = consumer;
    await consumer.start();
  }

  /** `manual` commit: each batch to `handleBatch`; the hooks commit what they have finished. */
  private batchHandler(): (batch: FetchedBatch) => Promise<void> {
    const handleBatch = this.required('handleBatch');
    return (batch) =>
      handleBatch({
        topic: batch.topic,
        partition: batch.partition,
        messages: batch.messages.map((m) => messageOf(batch.topic, batch.partition, m)),
        lastOffset: batch.lastOffset(),
      });
  }

  /**
   * `each-slice` commit: a batch's records in order, `recordsAtOnce` at a time, each slice retried in place with backoff
   * until handled; a batch's offsets are committed once all its records are. At most `partitionsAtOnce` partitions are
   * handled side by side.
   */
  private sliceHandler(partitionsAtOnce: number, recordsAtOnce: number): (batch: FetchedBatch, consumer: GroupConsumer) => Promise<void> {
    const handle = this.required('handleSlice');
    const slots = new Slots(partitionsAtOnce);
    return (batch, consumer) =>
      slots.run(async () => {
        const messages = batch.messages.map((record) => messageOf(batch.topic, batch.partition, record));
        for (let start = 0; start < messages.length; start += recordsAtOnce) {
          if (this.halted) return;
          const slice = messages.slice(start, start + recordsAtOnce);
          for (let attempt = 0; ; attempt++) {
            try {
              await handle(slice);
              break;
            } catch (error) {
              this.hooks.onError(error, { attempt, message: slice[0] });
              const until = Date.now() + backoffDelay(attempt, 200, 30_000);
              while (Date.now() < until) {
                if (this.halted) return;
                await sleep(Math.min(1_000, until - Date.now()));
              }
            }
          }
        }
        const next = (BigInt(batch.lastOffset()) + 1n).toString();
        await consumer.commitOffsets([{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }]);
      });
  }

  private async commit(offsets: TopicOffset[]): Promise<void> {
    if (offsets.length === 0 || !this.consumer) return;
    await this.consumer.commitOffsets(offsets.map(({ topic, partition, offset }) => ({ topic, partitions: [{ partition, offset }] })));
  }

  private required<K extends 'handleSlice' | 'handleBatch'>(hook: K): NonNullable<WorkerHooks[K]> {
    const found = this.hooks[hook];
    if (!found) throw new Error(`worker ${this.spec.name} reads a topic but has no ${hook} hook`);
    return found.bind(this.hooks) as NonNullable<WorkerHooks[K]>;
  }
}

/** At most `size` pieces of work at once; the others wait their turn in order. */
class Slots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  private readonly size: number;

  constructor(size: number) {
    this.size = size;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

const messageOf = (topic: string, partition: number, record: FetchedRecord): TopicMessage => ({
  topic,
  partition,
  offset: record.offset,
  value: record.value,
  header: (name) => record.headers[name]?.toString(),
});

/** Logs a failed round, one line per kind per interval, in a worker's words. */
export const logFailure =
  (context: Pick<WorkerContext, 'throttled'>, kind: string, message: string) =>
  (error: unknown): void =>
    context.throttled.write('warn', kind, { err: errorField(error) }, message);
