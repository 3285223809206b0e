import { uuidv5 } from './uuid-v5.ts';
import type { Aggregate } from './aggregate.ts';
import type { EventCodec } from './event-codec.ts';
import { chunkBySize, consumedOffsets, recordBytes } from './group-commit.ts';
import { inTransaction, retryTransient, type GroupMember, type Kafka, type OutgoingRecord, type TransactionalProducer } from './kafka.ts';
import type { Logger } from './logger.ts';
import type { Command, CommandInput, Event, RecordedEvent } from './message.ts';
import { timedTransaction, type ProcessorMetrics } from './processor-metrics.ts';
import { PartitionedConsumer, type PartitionTask, type TaskBatch } from './partition-tasks.ts';
import type { PartSignals } from './supervisor.ts';
import { namespaced, type TopicSpec } from './topics.ts';

/** A command an event leads to, addressed to the single writer of its aggregate. */
export type RoutedCommand = { topic: TopicSpec; aggregateId: string; command: CommandInput<Command> };

/** Addresses a command to its aggregate; a command of another aggregate does not compile. */
export const routeTo = <C extends Command, E extends Event, S>(
  aggregate: Aggregate<C, E, S>,
  command: CommandInput<NoInfer<C>>,
): RoutedCommand => ({
  topic: aggregate.commands,
  aggregateId: aggregate.aggregateIdOf(command),
  command,
});

/**
 * A stateless stream processor (a process manager): it reads events and turns each into commands for
 * other aggregates. Decisions stay with the aggregates' own deciders, so invariants keep one writer.
 */
export type EventRoute = {
  name: string;
  topics: TopicSpec[];
  /** Pure: the same event always yields the same commands (replays and redeliveries stay deterministic). */
  route: (event: RecordedEvent) => RoutedCommand[];
  /** `batched` when no request waits for the route's commands: fewer, larger rounds, up to a second behind when idle. */
  fetch?: 'prompt' | 'batched';
};

const COMMAND_ID_NAMESPACE = '0c7f6c2e-3f1b-4a9e-9a4f-2f6c1d8e7b55';

/**
 * The header naming the routes an event's own processor already ran in the event's transaction (comma-separated):
 * their routers pass over it.
 */
export const ROUTED_BY_HEADER = 'routed-by';

/** Whether `route` already ran for this event record in the transaction that wrote it. */
export const routedInline = (headers: Record<string, Buffer | undefined>, route: string): boolean =>
  headers[ROUTED_BY_HEADER]?.toString().split(',').includes(route) ?? false;

/**
 * The record of the `index`th command `route` turned `event` into, wherever the route runs (its router, or the
 * processor writing the event): the same id, so the same command.
 */
export function routedCommandRecord(route: string, event: RecordedEvent, index: number, routed: RoutedCommand): OutgoingRecord {
  const command: Command = {
    ...routed.command,
    metadata: {
      commandId: uuidv5(`${route}/${event.envelope.eventId}/${index}`, COMMAND_ID_NAMESPACE),
      tenantId: event.envelope.tenantId,
      orgId: event.envelope.orgId,
      actor: event.envelope.actor,
      issuedAt: event.envelope.occurredAt,
      correlationId: event.envelope.correlationId,
      // Nobody waits for a routed command's decision (its id is derived, no request registered it): no reply record.
      noReply: true,
    },
  };
  return { key: routed.aggregateId, value: JSON.stringify(command), headers: { 'command-type': command.type } };
}

export type RouterDeps = {
  kafka: Kafka;
  codec: EventCodec;
  namespace: string;
  logger: Logger;
  maxRecordBytes: number;
  /** Where each transaction is counted and timed (none: not measured). */
  metrics?: ProcessorMetrics;
};

type Consumed = { topic: string; partition: number; lastOffset: () => string };
/** One consumed event (of its partition's task) and the command records it leads to. */
type Routed = { task: RouterTask; consumed: Consumed; commands: { topic: string; record: OutgoingRecord }[] };

/** A router's partition: the offsets of its rounds that wrote nothing yet. */
type RouterTask = PartitionTask & { held: HeldOffsets };

/** Offsets of rounds that wrote nothing, waiting to be committed with a later transaction. */
export class HeldOffsets {
  private held: Consumed[] = [];
  private since?: number;

  private readonly maxHoldMs: number;

  constructor(maxHoldMs = 1_000) {
    this.maxHoldMs = maxHoldMs;
  }

  /** Whether the oldest held offsets have waited long enough that this round should commit even without output. */
  due(now: number): boolean {
    return this.since !== undefined && now - this.since >= this.maxHoldMs;
  }

  hold(consumed: Consumed[], now: number): void {
    this.held.push(...consumed);
    this.since ??= now;
  }

  take(): Consumed[] {
    const held = this.held;
    this.held = [];
    this.since = undefined;
    return held;
  }
}

/**
 * Runs an EventRoute: the commands of a batch and the consumed offsets commit in one Kafka
 * transaction, so each event leads to its commands exactly once, across crashes and restarts.
 * Routed commands carry the causing event's tenant, org, actor and time; their ids derive from
 * the event id, so a command is recognisable however often the route runs.
 */
export class EventRouter {
  private readonly groupId: string;
  /** The part's name, as its supervisor's: what its transactions are counted under. */
  private readonly part: string;
  private readonly log: Logger;
  private readonly partitions: PartitionedConsumer<RouterTask>;

  private readonly deps: RouterDeps;
  private readonly definition: EventRoute;
  private readonly signals: PartSignals;

  constructor(deps: RouterDeps, definition: EventRoute, signals: PartSignals) {
    this.deps = deps;
    this.definition = definition;
    this.signals = signals;

    this.part = `${definition.name}-router`;
    this.groupId = namespaced(deps.namespace, `commerce-ledger.${this.part}`);
    this.log = deps.logger.child({ component: `${definition.name}-router` });
    this.partitions = new PartitionedConsumer(deps.kafka, this.groupId, signals, {
      extend: (task) => ({ ...task, held: new HeldOffsets() }),
      fetch: definition.fetch ?? 'prompt',
      run: (round, { producer, member }) => this.routeAndCommit(round, producer, member),
    });
  }

  /** The instance's transactional producer commits every round of its partitions (see `ledger/partition-tasks.ts`). */
  async start(): Promise<void> {
    await this.partitions.start(this.definition.topics.map((topic) => namespaced(this.deps.namespace, topic.name)));
  }

  async stop(): Promise<void> {
    await this.partitions.stop();
  }

  private async routeAndCommit(round: TaskBatch<RouterTask>[], producer: TransactionalProducer, member: GroupMember): Promise<void> {
    const routed: Routed[] = [];
    for (const { task, batch } of round) {
      for (const message of batch.messages) {
        if (task.committed.covers(batch.topic, batch.partition, message.offset)) continue;
        const commands: Routed['commands'] = [];
        if (message.value && !routedInline(message.headers, this.definition.name)) {
          const event = await this.deps.codec.decode(message.value, {
            topic: batch.topic,
            partition: batch.partition,
            offset: message.offset,
          });
          for (const [index, command] of this.definition.route(event).entries()) {
            const record = routedCommandRecord(this.definition.name, event, index, command);
            // A command the broker would refuse would block the partition for good: log it and go on.
            if (recordBytes(record) > this.deps.maxRecordBytes)
              this.log.error(
                { eventId: event.envelope.eventId, type: command.command.type },
                'routed command over the record limit dropped',
              );
            else commands.push({ topic: namespaced(this.deps.namespace, command.topic.name), record });
          }
        }
        routed.push({ task, consumed: { topic: batch.topic, partition: batch.partition, lastOffset: () => message.offset }, commands });
      }
    }
    const weight = (r: Routed) => r.commands.reduce((sum, c) => sum + recordBytes(c.record), 0);
    for (const chunk of chunkBySize(routed, weight, this.deps.maxRecordBytes)) {
      const tasks = [...new Set(chunk.map((r) => r.task))];
      const now = Date.now();
      if (chunk.every((r) => r.commands.length === 0) && !tasks.some((task) => task.held.due(now))) {
        // Nothing to write: no transaction. The offsets go with the next one (a crash re-reads these events, which lead
        // to nothing again), or with an offsets-only one at most once a second.
        for (const task of tasks)
          task.held.hold(
            chunk.filter((r) => r.task === task).map((r) => r.consumed),
            now,
          );
      } else {
        const held = tasks.flatMap((task) => task.held.take());
        await timedTransaction(this.deps.metrics, this.part, () => this.commitRound(producer, member, chunk, held));
      }
      for (const { task, consumed } of chunk) task.committed.advance([consumed]);
    }
  }

  /** The commands of a run of events and those events' offsets (and any held ones), in one transaction. */
  private async commitRound(producer: TransactionalProducer, member: GroupMember, round: Routed[], held: Consumed[]): Promise<void> {
    const byTopic = new Map<string, OutgoingRecord[]>();
    for (const { topic, record } of round.flatMap((r) => r.commands)) {
      const messages = byTopic.get(topic) ?? [];
      messages.push(record);
      byTopic.set(topic, messages);
    }
    await inTransaction(producer, async (transaction) => {
      if (byTopic.size > 0) {
        const topicMessages = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
        await retryTransient(() => transaction.sendBatch({ topicMessages }));
      }
      await retryTransient(() => transaction.sendOffsets({ member, topics: consumedOffsets([...held, ...round.map((r) => r.consumed)]) }));
    });
  }
}
