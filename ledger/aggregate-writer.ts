import type { Kafka, OutgoingRecord, WrittenRecords } from './kafka.ts';
import { uuidv5 } from './uuid-v5.ts';
import type { Aggregate } from './aggregate.ts';
import { ConflictError, DomainError, NotFoundError, serializeDomainError, type SerializedDomainError } from './errors.ts';
import type { EventCodec } from './event-codec.ts';
import { recordBytes } from './group-commit.ts';
import { isReplay, rememberRequest } from './idempotency.ts';
import type { Logger } from './logger.ts';
import type { ProcessorMetrics } from './processor-metrics.ts';
import type { Command, Event, EventEnvelope } from './message.ts';
import { MemorySnapshots, type KeptRecord, type SnapshotKeeper } from './snapshot-keeper.ts';
import type { StateStore } from './snapshot-store.ts';
import { readSnapshots, type Barrier, type Owner, type Snapshot } from './state-store.ts';
import { namespaced } from './topics.ts';

/** Where a writer used without partitions (a unit test's) keeps its snapshots. */
const UNPARTITIONED = -1;

const EVENT_ID_NAMESPACE = '5b7d3c1e-9a55-4f41-8d8b-6f0f3b1f6c2a';

export type Decision<E> =
  | { command: Command; aggregateId: string; events: E[]; outcome: 'accepted' }
  | { command: Command; outcome: 'rejected'; error: SerializedDomainError };

/** An aggregate's state after the round's decisions so far, serialized as it will be written. */
export type Touched<S> = { aggregateId: string; snapshot: Snapshot<S>; value: Buffer; partition?: number };
/** Where a decision finds the states the round has changed so far. */
export type TouchedView<S> = Pick<Map<string, Touched<S>>, 'get'>;
/** A decision with the event records it writes and the state it leaves. */
export type Decided<E, S> = { decision: Decision<E>; events: OutgoingRecord[]; eventBytes: number; next?: Touched<S> };

/** `stateStore`: where snapshots are kept beyond memory (none: all in memory, read from the changelog at each assignment). */
export type WriterDeps = {
  codec: EventCodec;
  namespace: string;
  maxRecordBytes: number;
  stateStore?: StateStore;
  metrics?: ProcessorMetrics;
};

/** How many changelog records a restore applies to the store at a time. */
const RESTORE_CHUNK = 1_000;

/**
 * One aggregate type as its single writer holds it: the latest snapshot of every aggregate, and how a command
 * becomes the event records and the state record one transaction writes.
 */
export class AggregateWriter<C extends Command, E extends Event, S> {
  readonly topic: { events: string; state: string };
  /** By changelog partition: the partitions this instance owns (a command's partition is its aggregate's). */
  private readonly snapshots: SnapshotKeeper<S>;

  private readonly deps: WriterDeps;
  readonly definition: Aggregate<C, E, S>;
  private readonly log: Logger;

  constructor(deps: WriterDeps, definition: Aggregate<C, E, S>, log: Logger) {
    this.deps = deps;
    this.definition = definition;
    this.log = log;

    this.topic = { events: namespaced(deps.namespace, definition.events.name), state: namespaced(deps.namespace, definition.state.name) };
    this.snapshots = deps.stateStore?.keeper<S>(this.topic.state) ?? new MemorySnapshots<S>();
  }

  /**
   * Reads the given state partitions up to their barriers (see `writeBarrier`): from the offset the store reflects, or
   * from the beginning when it holds nothing for the partition or more than the changelog does (a recreated topic).
   */
  async restore(kafka: Kafka, barriers: Map<number, Barrier>, cancelled?: AbortSignal): Promise<void> {
    const from = new Map<number, string>();
    const ends = new Map<number, bigint>();
    for (const [partition, barrier] of barriers) {
      const end = barrier.offsets.get(this.topic.state) ?? -1n;
      const kept = this.snapshots.position(partition);
      ends.set(partition, end);
      if (kept === undefined || kept > end) this.snapshots.clear(partition);
      else from.set(partition, kept.toString());
    }
    const pending = new Map<number, KeptRecord<S>[]>();
    let read = 0;
    const flush = (partition: number, next: bigint | undefined) => {
      this.snapshots.apply(partition, pending.get(partition) ?? [], next);
      pending.delete(partition);
    };
    const ids = new Map([...barriers].map(([partition, { id }]) => [partition, id]));
    await readSnapshots(
      kafka,
      this.topic.state,
      ids,
      (partition, key, value, offset) => {
        // A cancelled restore's part is stopping, and a new run may restore the same partitions: it writes nothing more.
        if (cancelled?.aborted) return;
        read++;
        const records = pending.get(partition) ?? [];
        records.push([key, value]);
        pending.set(partition, records);
        if (records.length >= RESTORE_CHUNK) flush(partition, BigInt(offset) + 1n);
      },
      from,
      cancelled,
    );
    cancelled?.throwIfAborted();
    // Everything before each barrier has been read; the barrier itself is no aggregate's.
    for (const [partition, end] of ends) flush(partition, end >= 0n ? end + 1n : undefined);
    this.deps.metrics?.restored(this.definition.name, read);
    this.log.info(
      { aggregate: this.definition.name, partitions: [...barriers.keys()], read, from: Object.fromEntries(from) },
      'state restored from changelog',
    );
  }

  /** A partition this instance no longer owns: its state may change elsewhere from now on. */
  forget(partition: number): void {
    this.snapshots.release(partition);
  }

  /**
   * Once the round's transaction has committed, its states are the latest. `written`: where the transaction's records
   * went, from which each partition's changelog position past the round's state records (one per touched aggregate)
   * follows; without it, the store's position stays where it was.
   */
  remember(touched: Map<string, Touched<S>>, written: WrittenRecords[] = []): void {
    const byPartition = new Map<number, KeptRecord<S>[]>();
    for (const [aggregateId, { snapshot, value, partition = UNPARTITIONED }] of touched) {
      const records = byPartition.get(partition) ?? [];
      records.push([aggregateId, value, snapshot]);
      byPartition.set(partition, records);
    }
    for (const [partition, records] of byPartition) {
      const base = written.find((w) => w.topicName === this.topic.state && w.partition === partition)?.baseOffset;
      this.snapshots.apply(partition, records, base === undefined ? undefined : BigInt(base) + BigInt(records.length));
    }
  }

  /**
   * Decides one command against the latest state (the round's own changes first) and encodes what it would write.
   * `partition`: where its records go (its command's partition); without it, the producer places them by key.
   */
  async decide(command: C, partition: number | undefined, touched: TouchedView<S>): Promise<Decided<E, S>> {
    const { decider, name } = this.definition;
    const aggregateId = this.definition.aggregateIdOf(command);
    const rejected = (error: SerializedDomainError): Decided<E, S> => ({
      decision: { command, outcome: 'rejected', error },
      events: [],
      eventBytes: 0,
    });
    const current = touched.get(aggregateId)?.snapshot ??
      this.snapshots.get(partition ?? UNPARTITIONED, aggregateId) ?? { owner: null, state: decider.initialState(), version: 0 };
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
    if (events.length === 0) return { decision, events: [], eventBytes: 0 };
    const messages: OutgoingRecord[] = [];
    for (const [index, event] of events.entries()) {
      const value = await this.deps.codec.encode(this.topic.events, event, envelope(command, aggregateId, event, index));
      messages.push({ key: aggregateId, value, ...(partition === undefined ? {} : { partition }), headers: { 'event-type': event.type } });
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
    return { decision, events: messages, eventBytes, next: { aggregateId, snapshot, value, partition } };
  }
}

/** The envelope of the `index`th event of a command; its id derives from the command's, so a re-decision keeps it. */
export const envelope = (command: Command, aggregateId: string, event: Event, index: number): EventEnvelope => {
  const { metadata } = command;
  return {
    eventId: eventIdOf(command, index),
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
};

export const eventIdOf = (command: Command, index: number): string => uuidv5(`${command.metadata.commandId}/${index}`, EVENT_ID_NAMESPACE);

/** The state records of a round's touched aggregates. */
export const stateMessages = <S>(touched: Map<string, Touched<S>>): OutgoingRecord[] =>
  [...touched].map(([aggregateId, { value, partition }]) => ({
    key: aggregateId,
    value,
    ...(partition === undefined ? {} : { partition }),
  }));
