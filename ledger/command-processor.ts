import type { Batch, Consumer, Kafka, KafkaMessage, Message, Producer } from 'kafkajs';
import { v5 as uuidv5 } from 'uuid';
import type { Aggregate } from './aggregate.ts';
import type { CommandReply } from './command-reply.ts';
import { ConflictError, DomainError, NotFoundError, serializeDomainError, type SerializedDomainError } from './errors.ts';
import type { EventCodec } from './event-codec.ts';
import { CommittedPositions, consumedOffsets, GroupCommit, groupCommitRun, recordBytes } from './group-commit.ts';
import { isReplay, rememberRequest } from './idempotency.ts';
import { disconnectQuietly, inTransaction, retryTransient, supervisedConsumer, transactionalProducer } from './kafka.ts';
import type { Logger } from './logger.ts';
import type { Command, Event, EventEnvelope, LogPosition } from './message.ts';
import { restoreSnapshots, type Owner, type Snapshot } from './state-store.ts';
import { StopOnFailure, type PartSignals } from './supervisor.ts';
import { namespaced, topics } from './topics.ts';

/** `maxRecordBytes`: the most one topic's records of one transaction may weigh (config RECORD_LIMIT_BYTES). */
export type ProcessorDeps = { kafka: Kafka; codec: EventCodec; namespace: string; logger: Logger; maxRecordBytes: number };

const EVENT_ID_NAMESPACE = '5b7d3c1e-9a55-4f41-8d8b-6f0f3b1f6c2a';

type Decision<E> =
  | { command: Command; aggregateId: string; events: E[]; outcome: 'accepted' }
  | { command: Command; outcome: 'rejected'; error: SerializedDomainError };

/** An aggregate's state after the round's decisions so far, serialized as it will be written. */
type Touched<S> = { aggregateId: string; snapshot: Snapshot<S>; value: Buffer; partition: number };
/** A decision with the event records it writes (in its command's partition) and the state it leaves. */
type Decided<E, S> = { decision: Decision<E>; partition: number; events: Message[]; eventBytes: number; next?: Touched<S> };
type Inbound = { batch: Batch; message: KafkaMessage };
type Consumed = { topic: string; partition: number; lastOffset: () => string };
type Round<E, S> = { decided: Decided<E, S>[]; touched: Map<string, Touched<S>>; consumed: Consumed[]; end: number };

/** What a reply costs at most in the budget (a command id, an aggregate id, a position or an error message). */
const REPLY_BYTES = 2_048;

/**
 * The single writer of one aggregate type. Each batch of commands is decided against state restored
 * from the compacted changelog, and its events, new state, replies and consumed offsets are committed
 * in one Kafka transaction, so a crash can neither lose nor repeat a decision.
 */
export class CommandProcessor<C extends Command, E extends Event, S> {
  private readonly groupId: string;
  private readonly topic: { commands: string; events: string; state: string; replies: string };
  private readonly log: Logger;
  private producer?: Producer;
  private consumer?: Consumer;
  private snapshots = new Map<string, Snapshot<S>>();
  private joins = 0;
  private stale = false;
  private readonly group = new GroupCommit<Batch>((batches) => this.rounds.run(() => this.decideAndCommit(batches)));
  private readonly rounds: StopOnFailure;
  private readonly committed = new CommittedPositions();

  constructor(
    private readonly deps: ProcessorDeps,
    private readonly definition: Aggregate<C, E, S>,
    private readonly signals: PartSignals,
  ) {
    this.rounds = new StopOnFailure(signals);
    const ns = deps.namespace;
    this.groupId = namespaced(ns, `commerce-ledger.${definition.name}-processor`);
    this.topic = {
      commands: namespaced(ns, definition.commands.name),
      events: namespaced(ns, definition.events.name),
      state: namespaced(ns, definition.state.name),
      replies: namespaced(ns, topics.commandReplies.name),
    };
    this.log = deps.logger.child({ component: `${definition.name}-processor` });
  }

  /** Fresh clients each time: the producer first, so the previous incarnation's open transaction is over before anything is read. */
  async start(): Promise<void> {
    const { kafka } = this.deps;
    this.rounds.reset();
    this.joins = 0;
    this.stale = false;
    const producer = transactionalProducer(kafka, this.groupId);
    this.producer = producer;
    await producer.connect();
    await this.restore();
    const consumer = supervisedConsumer(kafka, { groupId: this.groupId, readUncommitted: false }, this.signals);
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, () => {
      // After a rebalance another instance may have written state for partitions we now own.
      if (this.joins++ > 0) this.stale = true;
    });
    await consumer.connect();
    await consumer.subscribe({ topic: this.topic.commands, fromBeginning: true });
    await consumer.run(groupCommitRun(this.group, { autoCommit: false }));
  }

  async stop(): Promise<void> {
    const { consumer, producer } = this;
    this.consumer = undefined;
    this.producer = undefined;
    await disconnectQuietly(consumer, producer);
  }

  private async restore(): Promise<void> {
    if (!this.producer) throw new Error('processor not started');
    this.snapshots = await restoreSnapshots<S>(this.deps.kafka, this.producer, this.topic.state, `${this.groupId}.restore`);
    this.log.info({ aggregates: this.snapshots.size }, 'state restored from changelog');
  }

  private async decideAndCommit(batches: Batch[]): Promise<void> {
    if (this.stale) {
      this.stale = false;
      await this.restore();
    }
    const producer = this.producer;
    if (!producer) throw new Error('processor not started');
    const inbox = batches.flatMap((batch) =>
      batch.messages
        .filter((message) => !this.committed.covers(batch.topic, batch.partition, message.offset))
        .map((message) => ({ batch, message })),
    );
    // What does not fit one transaction's record budget waits for the next one.
    for (let start = 0; start < inbox.length;) {
      const round = await this.decideRound(inbox, start);
      await this.commitRound(producer, round);
      for (const [aggregateId, { snapshot }] of round.touched) this.snapshots.set(aggregateId, snapshot);
      this.committed.advance(round.consumed);
      start = round.end;
    }
  }

  /**
   * Decides commands from `start` on while their records fit the budget: a topic-partition's records travel
   * as one record batch, which the broker refuses above the limit, so each topic's records stay under it.
   */
  private async decideRound(inbox: Inbound[], start: number): Promise<Round<E, S>> {
    const limit = this.deps.maxRecordBytes;
    const touched = new Map<string, Touched<S>>();
    const decided: Decided<E, S>[] = [];
    const consumed: Consumed[] = [];
    const used = { events: 0, state: 0, replies: 0 };
    let end = start;
    for (; end < inbox.length; end++) {
      const { batch, message } = inbox[end] as Inbound;
      const command = this.parse(message.value);
      if (command) {
        const one = await this.decideOne(command, batch.partition, touched);
        const cost = {
          events: one.eventBytes,
          state: one.next ? one.next.value.length - (touched.get(one.next.aggregateId)?.value.length ?? 0) : 0,
        };
        const fits = used.events + cost.events <= limit && used.state + cost.state <= limit && used.replies + REPLY_BYTES <= limit;
        if (!fits && decided.length > 0) break;
        used.events += cost.events;
        used.state += cost.state;
        used.replies += REPLY_BYTES;
        if (one.next) touched.set(one.next.aggregateId, one.next);
        decided.push(one);
      }
      consumed.push({ topic: batch.topic, partition: batch.partition, lastOffset: () => message.offset });
    }
    return { decided, touched, consumed, end };
  }

  private async commitRound(producer: Producer, { decided, touched, consumed }: Round<E, S>): Promise<void> {
    await inTransaction(producer, async (transaction) => {
      const lastEvent = new Map<Decided<E, S>, { partition: number; index: number }>();
      const sentTo = new Map<number, number>();
      for (const one of decided) {
        if (one.events.length === 0) continue;
        const index = (sentTo.get(one.partition) ?? 0) + one.events.length;
        sentTo.set(one.partition, index);
        lastEvent.set(one, { partition: one.partition, index: index - 1 });
      }
      const eventMessages = decided.flatMap((one) => one.events);
      const stateMessages: Message[] = [...touched].map(([aggregateId, { value, partition }]) => ({ key: aggregateId, value, partition }));
      const written = await retryTransient(() =>
        transaction.sendBatch({
          acks: -1,
          topicMessages: [
            ...(eventMessages.length > 0 ? [{ topic: this.topic.events, messages: eventMessages }] : []),
            ...(stateMessages.length > 0 ? [{ topic: this.topic.state, messages: stateMessages }] : []),
          ],
        }),
      );
      // Replies name the offsets of their events, which are known only once those are written.
      const baseOffsets = new Map(
        written.filter((w) => w.topicName === this.topic.events).map((w) => [w.partition, BigInt(w.baseOffset ?? '0')]),
      );
      const positionOf = (one: Decided<E, S>): LogPosition[] => {
        const last = lastEvent.get(one);
        if (!last) return [];
        const offset = (baseOffsets.get(last.partition) ?? 0n) + BigInt(last.index);
        return [{ topic: this.topic.events, partition: last.partition, offset: offset.toString() }];
      };
      const replies = decided.map((one) => ({
        key: one.decision.command.metadata.commandId,
        value: JSON.stringify(this.reply(one.decision, positionOf(one))),
      }));
      await retryTransient(() => transaction.send({ acks: -1, topic: this.topic.replies, messages: replies }));
      await retryTransient(() => transaction.sendOffsets({ consumerGroupId: this.groupId, topics: consumedOffsets(consumed) }));
    });
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

  /** Decides one command against the latest state, and encodes what it would write. */
  private async decideOne(command: C, partition: number, touched: Map<string, Touched<S>>): Promise<Decided<E, S>> {
    const { decider, name } = this.definition;
    const aggregateId = this.definition.aggregateIdOf(command);
    const rejected = (error: SerializedDomainError): Decided<E, S> => ({
      decision: { command, outcome: 'rejected', error },
      partition,
      events: [],
      eventBytes: 0,
    });
    const current = touched.get(aggregateId)?.snapshot ??
      this.snapshots.get(aggregateId) ?? { owner: null, state: decider.initialState(), version: 0 };
    const caller: Owner = { tenantId: command.metadata.tenantId, orgId: command.metadata.orgId };
    // Tenant isolation lives here, once for every aggregate: another tenant's aggregate does not exist for you.
    if (current.owner && (current.owner.tenantId !== caller.tenantId || current.owner.orgId !== caller.orgId)) {
      return rejected(serializeDomainError(new NotFoundError(`${name} ${aggregateId} not found`)));
    }
    let events: E[];
    try {
      // A retry of a request this aggregate accepted (Idempotency-Key) is accepted again, with nothing new.
      events = isReplay(current.requests, command.metadata) ? [] : decider.decide(command, current.state);
    } catch (error) {
      if (error instanceof DomainError) return rejected(serializeDomainError(error));
      this.log.error({ err: error, commandType: command.type }, 'decider failed');
      return rejected({ kind: 'internal', message: 'the command could not be processed', details: [] });
    }
    const decision: Decision<E> = { command, aggregateId, events, outcome: 'accepted' };
    if (events.length === 0) return { decision, partition, events: [], eventBytes: 0 };
    const messages: Message[] = [];
    for (const [index, event] of events.entries()) {
      const value = await this.deps.codec.encode(this.topic.events, event, this.envelope(command, aggregateId, event, index));
      messages.push({ key: aggregateId, value, partition, headers: { 'event-type': event.type } });
    }
    const snapshot: Snapshot<S> = {
      owner: current.owner ?? caller,
      state: events.reduce((state, event) => decider.evolve(state, event), current.state),
      version: current.version + events.length,
      ...rememberRequest(current.requests, command.metadata),
    };
    const value = Buffer.from(JSON.stringify(snapshot));
    // A record the broker would refuse must not reach the transaction: it would fail again on every retry.
    const limit = this.deps.maxRecordBytes;
    const eventBytes = messages.reduce((sum, m) => sum + recordBytes(m), 0);
    if (value.length > limit || eventBytes > limit) {
      return rejected(serializeDomainError(new ConflictError(`${name} ${aggregateId} would outgrow the ${limit}-byte record limit`)));
    }
    return { decision, partition, events: messages, eventBytes, next: { aggregateId, snapshot, value, partition } };
  }

  private envelope(command: Command, aggregateId: string, event: E, index: number): EventEnvelope {
    const { metadata } = command;
    return {
      eventId: uuidv5(`${metadata.commandId}/${index}`, EVENT_ID_NAMESPACE),
      eventType: event.type,
      aggregateId,
      tenantId: metadata.tenantId,
      orgId: metadata.orgId,
      actor: metadata.actor,
      occurredAt: metadata.issuedAt,
      correlationId: metadata.correlationId,
      causationId: metadata.commandId,
      schemaVersion: 1,
    };
  }

  private reply(decision: Decision<E>, positions: LogPosition[]): CommandReply {
    const commandId = decision.command.metadata.commandId;
    return decision.outcome === 'accepted'
      ? { commandId, outcome: 'accepted', aggregateId: decision.aggregateId, positions }
      : { commandId, outcome: 'rejected', error: decision.error };
  }
}
