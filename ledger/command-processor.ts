import { uuidv5 } from './uuid-v5.ts';
import type { Aggregate, Follower } from './aggregate.ts';
import {
  AggregateWriter,
  eventIdOf,
  stateMessages,
  type Decided,
  type Decision,
  type Touched,
  type TouchedView,
} from './aggregate-writer.ts';
import type { CommandReply } from './command-reply.ts';
import type { EventCodec } from './event-codec.ts';
import { ROUTED_BY_HEADER, routedCommandRecord, type EventRoute } from './event-router.ts';
import { consumedOffsets, recordBytes } from './group-commit.ts';
import {
  inTransaction,
  retryTransient,
  type FetchedBatch,
  type FetchedRecord,
  type GroupMember,
  type Kafka,
  type OutgoingRecord,
  type TopicRecords,
  type TransactionalProducer,
  type WrittenRecords,
} from './kafka.ts';
import type { Logger } from './logger.ts';
import type { Command, Event, LogPosition } from './message.ts';
import { startTimer, timedTransaction, type ProcessorMetrics, type RoundTally } from './processor-metrics.ts';
import { PartitionedConsumer, type PartitionTask, type TaskBatch } from './partition-tasks.ts';
import type { StateStore } from './snapshot-store.ts';
import { writeBarriers } from './state-store.ts';
import type { LocalReplies } from './reply-handover.ts';
import type { PartSignals } from './supervisor.ts';
import { namespaced, topics } from './topics.ts';

/**
 * `maxRecordBytes`: the most one topic's records of one transaction may weigh (config RECORD_LIMIT_BYTES); `metrics`:
 * where each round's decisions and transaction are measured (none: not measured).
 */
export type ProcessorDeps = {
  kafka: Kafka;
  codec: EventCodec;
  namespace: string;
  logger: Logger;
  maxRecordBytes: number;
  metrics?: ProcessorMetrics;
  /** Where snapshots are kept beyond memory (none: in memory). */
  stateStore?: StateStore;
  /** This process's command bus: a command naming its address is answered there, without a reply record. */
  localReplies?: LocalReplies;
};

const FOLLOWER_COMMAND_NAMESPACE = '9d4b2f61-6c0e-4f5e-8a9b-3e7d1c2a5b40';

type Inbound = { batch: FetchedBatch; message: FetchedRecord };
/** A record and the (namespaced) topic it goes to. */
type Addressed = { topic: string; record: OutgoingRecord };
type Consumed = { topic: string; partition: number; lastOffset: () => string };
/** A follower's share of a round: its event records, the states it leaves and how many commands it accepted and refused. */
type FollowerRound = {
  writer: AggregateWriter<Command, Event, unknown>;
  events: OutgoingRecord[];
  touched: Map<string, Touched<unknown>>;
  accepted: number;
  rejected: number;
};
type Round<E, S> = {
  decided: (Decided<E, S> & { partition: number })[];
  touched: Map<string, Touched<S>>;
  followers: FollowerRound[];
  /** The commands the routes run inline turned the round's events into. */
  commands: Addressed[];
  consumed: Consumed[];
  end: number;
};

/** What the followers would add to a round for one command, and how to add it once the command fits. */
type FollowerDecisions = { eventBytes: number; stateBytes: number; records: Addressed[]; apply: () => void };

/** What a reply costs at most in the budget (a command id, an aggregate id, a position or an error message). */
const REPLY_BYTES = 2_048;

/**
 * The single writer of one aggregate type (and of its followers, see `followedBy`) on the command partitions this
 * instance is assigned: a command's partition is its aggregate's, in the command, event and state topics alike. Each
 * partition's commands are decided against state restored from that partition of the compacted changelogs, and its
 * events, new states, replies and consumed offsets are committed in one transaction of the partition's own producer
 * (`ledger/partition-tasks.ts`), so neither a crash nor a partition moving to another instance can lose or repeat a
 * decision.
 */
export class CommandProcessor<C extends Command, E extends Event, S> {
  private readonly groupId: string;
  /** The part's name, as its supervisor's: what its transactions are counted under. */
  private readonly part: string;
  private readonly topic: { commands: string; replies: string };
  private readonly log: Logger;
  private readonly writer: AggregateWriter<C, E, S>;
  private readonly followers: { writer: AggregateWriter<Command, Event, unknown>; follower: Follower }[];
  private readonly partitions: PartitionedConsumer<PartitionTask>;
  /** By (namespaced) event topic this processor writes: the routes it runs on those events in their own transaction. */
  private readonly inline = new Map<string, EventRoute[]>();

  private readonly deps: ProcessorDeps;
  private readonly signals: PartSignals;

  /**
   * `routes`: the event routes of the service; those that read an event topic this processor writes and that a request
   * may wait for (not `batched`) run here, on each event as it is decided, and their commands go out in the event's
   * transaction (their routers pass over such events): a hop, a consumer round and a transaction fewer per routed event.
   */
  constructor(deps: ProcessorDeps, definition: Aggregate<C, E, S>, signals: PartSignals, routes: readonly EventRoute[] = []) {
    this.deps = deps;
    this.signals = signals;

    const ns = deps.namespace;
    this.part = `${definition.name}-processor`;
    this.groupId = namespaced(ns, `commerce-ledger.${this.part}`);
    this.topic = { commands: namespaced(ns, definition.commands.name), replies: namespaced(ns, topics.commandReplies.name) };
    this.log = deps.logger.child({ component: `${definition.name}-processor` });
    this.writer = new AggregateWriter(deps, definition, this.log);
    this.followers = (definition.followers ?? []).map((follower) => ({
      writer: new AggregateWriter(deps, follower.aggregate, this.log),
      follower,
    }));
    for (const writer of this.writers()) {
      // A batched route's commands nobody waits for: its router's second-long rounds write them in fewer transactions.
      const reading = routes.filter(
        (route) => route.fetch !== 'batched' && route.topics.some((topic) => namespaced(ns, topic.name) === writer.topic.events),
      );
      if (reading.length > 0) this.inline.set(writer.topic.events, reading);
    }
    this.partitions = new PartitionedConsumer(deps.kafka, this.groupId, signals, {
      extend: (task) => task,
      run: (round, { producer, member }) => this.decideAndCommit(round, producer, member),
      open: (tasks, producer, cancelled) => this.restore(tasks, producer, cancelled),
      close: ({ partition }) => {
        for (const writer of this.writers()) writer.forget(partition);
      },
    });
  }

  /**
   * Fresh clients each time: the instance's producer, opened (fencing this instance's previous incarnation) before the
   * group is joined; the part is running once every assigned partition is restored.
   */
  async start(): Promise<void> {
    await this.partitions.start([this.topic.commands]);
  }

  async stop(): Promise<void> {
    await this.partitions.stop();
  }

  private writers(): AggregateWriter<Command, Event, unknown>[] {
    return [this.writer as unknown as AggregateWriter<Command, Event, unknown>, ...this.followers.map((f) => f.writer)];
  }

  /**
   * New partitions' state: a barrier in every state changelog (one transaction for all the new partitions), then each
   * changelog read up to it. The group assigned the partitions only once their previous owner's generation was over, so
   * that owner's last transaction is committed or aborted before the barrier can be read past.
   */
  private async restore(tasks: PartitionTask[], producer: TransactionalProducer, cancelled: AbortSignal): Promise<void> {
    const writers = this.writers();
    const stateTopics = writers.map((writer) => writer.topic.state);
    const barriers = await writeBarriers(
      producer,
      stateTopics,
      tasks.map(({ partition }) => partition),
    );
    // Each changelog is read by a group of its own: side by side, a restore takes the longest read, not their sum.
    await Promise.all(writers.map((writer) => writer.restore(this.deps.kafka, barriers, cancelled)));
  }

  private async decideAndCommit(round: TaskBatch<PartitionTask>[], producer: TransactionalProducer, member: GroupMember): Promise<void> {
    const taskOf = new Map(round.map(({ task }) => [task.partition, task]));
    const inbox = round.flatMap(({ task, batch }) =>
      batch.messages
        .filter((message) => !task.committed.covers(batch.topic, batch.partition, message.offset))
        .map((message) => ({ batch, message })),
    );
    // What does not fit one transaction's record budget waits for the next one.
    const { metrics } = this.deps;
    for (let start = 0; start < inbox.length;) {
      const decideSeconds = metrics ? startTimer() : undefined;
      const decided = await this.decideRound(inbox, start);
      const decideTime = decideSeconds?.();
      const { written, local } = await timedTransaction(metrics, this.part, () => this.commitRound(producer, member, decided));
      if (local.length > 0) this.deps.localReplies?.deliver(local);
      this.writer.remember(decided.touched, written);
      for (const { writer, touched } of decided.followers) writer.remember(touched, written);
      for (const consumed of decided.consumed) taskOf.get(consumed.partition)?.committed.advance([consumed]);
      if (metrics && decideTime !== undefined)
        metrics.round(this.writer.definition.name, decideTime, decided.decided.length, this.tally(decided));
      start = decided.end;
    }
  }

  /** A committed round's outcomes per aggregate, in plain numbers (the metrics are then touched once per aggregate). */
  private tally({ decided, followers }: Round<E, S>): RoundTally {
    const own = { accepted: 0, rejected: 0 };
    for (const { decision } of decided) own[decision.outcome === 'accepted' ? 'accepted' : 'rejected']++;
    const tally: RoundTally = new Map([[this.writer.definition.name, own]]);
    for (const { writer, accepted, rejected } of followers) tally.set(writer.definition.name, { accepted, rejected });
    return tally;
  }

  /**
   * Decides commands from `start` on while their records fit the budget: a topic-partition's records travel
   * as one record batch, which the broker refuses above the limit, so each topic's records stay under it (the
   * followers' records count against the same budget, which is stricter than needed).
   */
  private async decideRound(inbox: Inbound[], start: number): Promise<Round<E, S>> {
    const limit = this.deps.maxRecordBytes;
    const touched = new Map<string, Touched<S>>();
    const followers: FollowerRound[] = this.followers.map(({ writer }) => ({
      writer,
      events: [],
      touched: new Map(),
      accepted: 0,
      rejected: 0,
    }));
    const decided: Round<E, S>['decided'] = [];
    const commands: Addressed[] = [];
    const consumed: Consumed[] = [];
    const used = { events: 0, state: 0, replies: 0, commands: 0 };
    let end = start;
    for (; end < inbox.length; end++) {
      const { batch, message } = inbox[end] as Inbound;
      const command = this.parse(message.value);
      if (command) {
        const one = await this.writer.decide(command, batch.partition, touched);
        const followed = await this.decideFollowers(one.decision, batch.partition, followers);
        const routed = await this.routeInline(
          [...one.events.map((record) => ({ topic: this.writer.topic.events, record })), ...followed.records],
          batch.partition,
        );
        const replyBytes = this.repliesWithRecord(command) ? REPLY_BYTES : 0;
        const cost = {
          events: one.eventBytes + followed.eventBytes + routed.headerBytes,
          state: (one.next ? sizeChange(one.next, touched) : 0) + followed.stateBytes,
          commands: routed.commands.reduce((sum, { record }) => sum + recordBytes(record), 0),
        };
        const fits =
          used.events + cost.events <= limit &&
          used.state + cost.state <= limit &&
          used.replies + replyBytes <= limit &&
          used.commands + cost.commands <= limit;
        if (!fits && decided.length > 0) break;
        used.events += cost.events;
        used.state += cost.state;
        used.replies += replyBytes;
        used.commands += cost.commands;
        if (one.next) touched.set(one.next.aggregateId, one.next);
        followed.apply();
        commands.push(...routed.commands);
        decided.push({ ...one, partition: batch.partition });
      }
      consumed.push({ topic: batch.topic, partition: batch.partition, lastOffset: () => message.offset });
    }
    return { decided, touched, followers, commands, consumed, end };
  }

  /**
   * Runs the inline routes on a decision's event records: the commands they lead to (as their router would have written
   * them: the same ids), and each record marked with the routes that ran (`routed-by`). The route reads the event as
   * decoded from its record, exactly what its router would read.
   */
  private async routeInline(records: Addressed[], partition: number): Promise<{ commands: Addressed[]; headerBytes: number }> {
    const commands: Addressed[] = [];
    let headerBytes = 0;
    for (const { topic, record } of records) {
      const routes = this.inline.get(topic);
      if (!routes || !Buffer.isBuffer(record.value)) continue;
      const event = await this.deps.codec.decode(record.value, { topic, partition, offset: '-1' });
      for (const route of routes)
        for (const [index, command] of route.route(event).entries()) {
          const routed = routedCommandRecord(route.name, event, index, command);
          // As its router would: a command the broker would refuse is logged and dropped rather than failing the round.
          if (recordBytes(routed) > this.deps.maxRecordBytes)
            this.log.error({ eventId: event.envelope.eventId, type: command.command.type }, 'routed command over the record limit dropped');
          else commands.push({ topic: namespaced(this.deps.namespace, command.topic.name), record: routed });
        }
      const mark = routes.map((route) => route.name).join(',');
      record.headers = { ...record.headers, [ROUTED_BY_HEADER]: mark };
      headerBytes += ROUTED_BY_HEADER.length + mark.length;
    }
    return { commands, headerBytes };
  }

  /**
   * The followers' decisions on an accepted decision's events, against the round's follower states so far; applied
   * to the round only if the command fits it. A follower that refuses a command records nothing (as a routed
   * command nobody waits for would have).
   */
  private async decideFollowers(decision: Decision<E>, partition: number, rounds: FollowerRound[]): Promise<FollowerDecisions> {
    const changes: (() => void)[] = [];
    const outcome: FollowerDecisions = {
      eventBytes: 0,
      stateBytes: 0,
      records: [],
      apply: () => changes.forEach((change) => change()),
    };
    if (decision.outcome !== 'accepted') return outcome;
    for (const [f, { writer, follower }] of this.followers.entries()) {
      const round = rounds[f] as FollowerRound;
      // This command's follower states over the round's (a copy of the round's map per command would cost a round's
      // size per command).
      const own = new Map<string, Touched<unknown>>();
      const touched: TouchedView<unknown> = { get: (id) => own.get(id) ?? round.touched.get(id) };
      let accepted = 0;
      let rejected = 0;
      for (const [index, event] of decision.events.entries()) {
        const eventId = eventIdOf(decision.command, index);
        for (const [j, input] of follower.commandsFor(event).entries()) {
          const command = { ...input, metadata: followerMetadata(decision.command, `${eventId}/${writer.definition.name}/${j}`) };
          // Keyed by its leader's id, a follower lives on its leader's partition.
          const one = await writer.decide(command, partition, touched);
          if (one.decision.outcome === 'rejected') {
            this.log.warn(
              { follower: writer.definition.name, error: one.decision.error, commandType: command.type },
              'follower refused a command',
            );
            rejected++;
            continue;
          }
          accepted++;
          if (!one.next) continue;
          outcome.stateBytes += sizeChange(one.next, touched);
          own.set(one.next.aggregateId, one.next);
          outcome.eventBytes += one.eventBytes;
          const events = one.events;
          outcome.records.push(...events.map((record) => ({ topic: writer.topic.events, record })));
          changes.push(() => round.events.push(...events));
        }
      }
      changes.push(() => {
        for (const [id, next] of own) round.touched.set(id, next);
        round.accepted += accepted;
        round.rejected += rejected;
      });
    }
    return outcome;
  }

  /**
   * Commits a round; answers where its records were written, and the replies this process's bus awaits, which are
   * handed over once the commit is done (the others are written in the transaction, on the replies topic).
   */
  private async commitRound(
    producer: TransactionalProducer,
    member: GroupMember,
    { decided, touched, followers, commands, consumed }: Round<E, S>,
  ): Promise<{ written: WrittenRecords[]; local: CommandReply[] }> {
    return inTransaction(producer, async (transaction) => {
      const lastEvent = new Map<Decided<E, S>, { partition: number; index: number }>();
      const sentTo = new Map<number, number>();
      for (const one of decided) {
        if (one.events.length === 0) continue;
        const index = (sentTo.get(one.partition) ?? 0) + one.events.length;
        sentTo.set(one.partition, index);
        lastEvent.set(one, { partition: one.partition, index: index - 1 });
      }
      const { events, state } = this.writer.topic;
      const topicMessages: TopicRecords[] = [
        { topic: events, messages: decided.flatMap((one) => one.events) },
        { topic: state, messages: stateMessages(touched) },
        ...followers.flatMap(({ writer, events: messages, touched: states }) => [
          { topic: writer.topic.events, messages },
          { topic: writer.topic.state, messages: stateMessages(states) },
        ]),
        ...byTopic(commands),
      ].filter(({ messages }) => messages.length > 0);
      const answered = decided.filter((one) => this.repliesWithRecord(one.decision.command));
      const answeredHere = decided.filter((one) => this.repliesHere(one.decision.command));
      const replyKeys = answered.map((one) => ({ key: one.decision.command.metadata.commandId, value: null }));
      const later = replyKeys.length > 0 ? [{ topic: this.topic.replies, messages: replyKeys }] : [];
      const written = await retryTransient(() => transaction.sendBatch({ topicMessages }, later));
      // Replies name the offsets of their events, which are known only once those are written.
      const baseOffsets = new Map(written.filter((w) => w.topicName === events).map((w) => [w.partition, BigInt(w.baseOffset ?? '-1')]));
      const positionOf = (one: Decided<E, S>): LogPosition[] => {
        const last = lastEvent.get(one);
        if (!last) return [];
        // A batch written again after a lost answer (a leader moving) may come back without its offset (-1): the
        // reply then says "unknown" (-1), and the edge waits for the log's end instead, never for a guess.
        const base = baseOffsets.get(last.partition);
        const offset = base === undefined || base < 0n ? -1n : base + BigInt(last.index);
        return [{ topic: events, partition: last.partition, offset: offset.toString() }];
      };
      const replies = answered.map((one) => ({
        key: one.decision.command.metadata.commandId,
        value: JSON.stringify(reply(one.decision, positionOf(one))),
      }));
      if (replies.length > 0) await retryTransient(() => transaction.send({ topic: this.topic.replies, messages: replies }));
      await retryTransient(() => transaction.sendOffsets({ member, topics: consumedOffsets(consumed) }));
      return { written, local: answeredHere.map((one) => reply(one.decision, positionOf(one))) };
    });
  }

  /** A command whose sender waits in this process: its reply is handed over, not written. */
  private repliesHere(command: Command): boolean {
    const address = this.deps.localReplies?.address;
    return !command.metadata.noReply && address !== undefined && command.metadata.replyTo === address;
  }

  private repliesWithRecord(command: Command): boolean {
    return !command.metadata.noReply && !this.repliesHere(command);
  }

  /** Only the edge writes commands; anything unreadable is logged and passed over rather than blocking the partition. */
  private parse(value: Buffer | null): C | undefined {
    try {
      const command = value ? (JSON.parse(value.toString()) as C) : undefined;
      if (command?.type && command.metadata?.commandId) return command;
    } catch {
      // fall through
    }
    this.log.error({ value: value?.toString().slice(0, 200) }, 'unreadable command skipped');
    return undefined;
  }
}

/** Records grouped by their topic, in order. */
const byTopic = (records: Addressed[]): TopicRecords[] => {
  const grouped = new Map<string, OutgoingRecord[]>();
  for (const { topic, record } of records) {
    const messages = grouped.get(topic) ?? [];
    messages.push(record);
    grouped.set(topic, messages);
  }
  return [...grouped].map(([topic, messages]) => ({ topic, messages }));
};

/** How much the round's state records grow when `next` replaces what the round already holds for that aggregate. */
const sizeChange = <S>(next: Touched<S>, touched: TouchedView<S>): number =>
  next.value.length - (touched.get(next.aggregateId)?.value.length ?? 0);

/** A follower's command carries its cause's tenant, actor and time; its id derives from the causing event's. */
const followerMetadata = (cause: Command, name: string): Command['metadata'] => ({
  commandId: uuidv5(name, FOLLOWER_COMMAND_NAMESPACE),
  tenantId: cause.metadata.tenantId,
  orgId: cause.metadata.orgId,
  actor: cause.metadata.actor,
  issuedAt: cause.metadata.issuedAt,
  correlationId: cause.metadata.correlationId,
});

const reply = <E>(decision: Decision<E>, positions: LogPosition[]): CommandReply => {
  const commandId = decision.command.metadata.commandId;
  return decision.outcome === 'accepted'
    ? { commandId, outcome: 'accepted', aggregateId: decision.aggregateId, positions }
    : { commandId, outcome: 'rejected', error: decision.error };
};
