import { randomUUID } from 'node:crypto';
import { Partitioners, type Batch, type Consumer, type Kafka, type Message, type Producer } from 'kafkajs';
import { v5 as uuidv5 } from 'uuid';
import type { CommandReply } from './command-reply.ts';
import { DomainError, NotFoundError, serializeDomainError, type SerializedDomainError } from './errors.ts';
import type { EventCodec } from './event-codec.ts';
import { consumedOffsets, eachBatchInto, GroupCommit, MAX_PARTITIONS } from './group-commit.ts';
import type { Logger } from './logger.ts';
import type { Command, Decider, Event, EventEnvelope, LogPosition } from './message.ts';
import { restoreSnapshots, type Owner, type Snapshot } from './state-store.ts';
import { namespaced, topics, type TopicSpec } from './topics.ts';

export type AggregateDefinition<C extends Command, E extends Event, S> = {
  /** Lower-case noun used in error messages and in consumer-group and transactional ids. */
  name: string;
  commands: TopicSpec;
  events: TopicSpec;
  state: TopicSpec;
  decider: Decider<C, E, S>;
  aggregateIdOf: (command: C) => string;
};

export type ProcessorDeps = { kafka: Kafka; codec: EventCodec; namespace: string; logger: Logger };

const EVENT_ID_NAMESPACE = '5b7d3c1e-9a55-4f41-8d8b-6f0f3b1f6c2a';

type Decision<E> =
  | { command: Command; aggregateId: string; events: E[]; outcome: 'accepted' }
  | { command: Command; outcome: 'rejected'; error: SerializedDomainError };

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
  private readonly group = new GroupCommit<Batch>((batches) => this.commitBatches(batches));

  constructor(
    private readonly deps: ProcessorDeps,
    private readonly definition: AggregateDefinition<C, E, S>,
  ) {
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

  async start(): Promise<void> {
    const { kafka } = this.deps;
    // A stable transactional id: starting again fences the previous incarnation and aborts its open transaction.
    this.producer = kafka.producer({
      transactionalId: this.groupId,
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await this.producer.connect();
    await this.restore();
    this.consumer = kafka.consumer({ groupId: this.groupId, readUncommitted: false, maxWaitTimeInMs: 100 });
    this.consumer.on(this.consumer.events.GROUP_JOIN, () => {
      // After a rebalance another instance may have written state for partitions we now own.
      if (this.joins++ > 0) this.stale = true;
    });
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.topic.commands, fromBeginning: true });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: MAX_PARTITIONS,
      eachBatch: eachBatchInto(this.group),
    });
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
    await this.producer?.disconnect();
  }

  private async restore(): Promise<void> {
    if (!this.producer) throw new Error('processor not started');
    this.snapshots = await restoreSnapshots<S>(this.deps.kafka, this.producer, this.topic.state, `${this.groupId}.restore`);
    this.log.info({ aggregates: this.snapshots.size }, 'state restored from changelog');
  }

  private async commitBatches(batches: Batch[]): Promise<void> {
    if (this.stale) {
      this.stale = false;
      await this.restore();
    }
    const producer = this.producer;
    if (!producer) throw new Error('processor not started');

    const touched = new Map<string, Snapshot<S>>();
    // Commands, state and events are co-partitioned by aggregate id: each decision stays in its batch's partition.
    const decisions = batches.flatMap((batch) =>
      batch.messages.flatMap((message) => {
        const command = this.parse(message.value);
        return command ? [{ partition: batch.partition, ...this.decideOne(command, touched) }] : [];
      }),
    );
    const partitionOf = new Map(decisions.flatMap((d) => (d.outcome === 'accepted' ? [[d.aggregateId, d.partition] as const] : [])));

    const transaction = await producer.transaction();
    try {
      const eventMessages: Message[] = [];
      const lastEvent = new Map<Decision<E>, { partition: number; index: number }>();
      const sentTo = new Map<number, number>();
      for (const decision of decisions) {
        if (decision.outcome !== 'accepted') continue;
        for (const [index, event] of decision.events.entries()) {
          const envelope = this.envelope(decision.command, decision.aggregateId, event, index);
          const value = await this.deps.codec.encode(this.topic.events, event, envelope);
          eventMessages.push({ key: decision.aggregateId, value, partition: decision.partition, headers: { 'event-type': event.type } });
          const indexInPartition = sentTo.get(decision.partition) ?? 0;
          sentTo.set(decision.partition, indexInPartition + 1);
          lastEvent.set(decision, { partition: decision.partition, index: indexInPartition });
        }
      }
      const stateMessages: Message[] = [...touched].map(([aggregateId, snapshot]) => ({
        key: aggregateId,
        value: JSON.stringify(snapshot),
        partition: partitionOf.get(aggregateId),
      }));
      const written = await transaction.sendBatch({
        acks: -1,
        topicMessages: [
          ...(eventMessages.length > 0 ? [{ topic: this.topic.events, messages: eventMessages }] : []),
          ...(stateMessages.length > 0 ? [{ topic: this.topic.state, messages: stateMessages }] : []),
        ],
      });
      // Replies name the offsets of their events, which are known only once those are written.
      const baseOffsets = new Map(written.filter((w) => w.topicName === this.topic.events).map((w) => [w.partition, BigInt(w.baseOffset ?? '0')]));
      const positionOf = (decision: Decision<E>): LogPosition[] => {
        const last = lastEvent.get(decision);
        if (!last) return [];
        const offset = (baseOffsets.get(last.partition) ?? 0n) + BigInt(last.index);
        return [{ topic: this.topic.events, partition: last.partition, offset: offset.toString() }];
      };
      await transaction.send({
        acks: -1,
        topic: this.topic.replies,
        messages: decisions.map((decision) => ({ key: decision.command.metadata.commandId, value: JSON.stringify(this.reply(decision, positionOf(decision))) })),
      });
      await transaction.sendOffsets({ consumerGroupId: this.groupId, topics: consumedOffsets(batches) });
      await transaction.commit();
    } catch (error) {
      await transaction.abort().catch((abortError: unknown) => this.log.warn({ err: abortError }, 'abort failed'));
      throw error;
    }
    for (const [aggregateId, snapshot] of touched) this.snapshots.set(aggregateId, snapshot);
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

  private decideOne(command: C, touched: Map<string, Snapshot<S>>): Decision<E> {
    const { decider, name } = this.definition;
    const aggregateId = this.definition.aggregateIdOf(command);
    const current = touched.get(aggregateId) ?? this.snapshots.get(aggregateId) ?? { owner: null, state: decider.initialState(), version: 0 };
    const caller: Owner = { tenantId: command.metadata.tenantId, orgId: command.metadata.orgId };
    // Tenant isolation lives here, once for every aggregate: another tenant's aggregate does not exist for you.
    if (current.owner && (current.owner.tenantId !== caller.tenantId || current.owner.orgId !== caller.orgId)) {
      return { command, outcome: 'rejected', error: serializeDomainError(new NotFoundError(`${name} ${aggregateId} not found`)) };
    }
    try {
      const events = decider.decide(command, current.state);
      if (events.length > 0) {
        touched.set(aggregateId, {
          owner: current.owner ?? caller,
          state: events.reduce(decider.evolve, current.state),
          version: current.version + events.length,
        });
      }
      return { command, aggregateId, events, outcome: 'accepted' };
    } catch (error) {
      if (error instanceof DomainError) return { command, outcome: 'rejected', error: serializeDomainError(error) };
      this.log.error({ err: error, commandType: command.type }, 'decider failed');
      return { command, outcome: 'rejected', error: { kind: 'internal', message: 'the command could not be processed', details: [] } };
    }
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

export const newCommandId = (): string => randomUUID();
