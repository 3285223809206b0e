import type { Message, Producer } from 'kafkajs';
import { uuidv5 } from './uuid-v5.ts';
import type { Aggregate } from './aggregate.ts';
import { ConflictError, DomainError, NotFoundError, serializeDomainError, type SerializedDomainError } from './errors.ts';
import type { EventCodec } from './event-codec.ts';
import { recordBytes } from './group-commit.ts';
import { isReplay, rememberRequest } from './idempotency.ts';
import type { Logger } from './logger.ts';
import type { Command, Event, EventEnvelope } from './message.ts';
import { restoreSnapshots, type Owner, type Snapshot } from './state-store.ts';
import { namespaced } from './topics.ts';

const EVENT_ID_NAMESPACE = '5b7d3c1e-9a55-4f41-8d8b-6f0f3b1f6c2a';

export type Decision<E> =
  | { command: Command; aggregateId: string; events: E[]; outcome: 'accepted' }
  | { command: Command; outcome: 'rejected'; error: SerializedDomainError };

/** An aggregate's state after the round's decisions so far, serialized as it will be written. */
export type Touched<S> = { aggregateId: string; snapshot: Snapshot<S>; value: Buffer; partition?: number };
/** Where a decision finds the states the round has changed so far. */
export type TouchedView<S> = Pick<Map<string, Touched<S>>, 'get'>;
/** A decision with the event records it writes and the state it leaves. */
export type Decided<E, S> = { decision: Decision<E>; events: Message[]; eventBytes: number; next?: Touched<S> };

export type WriterDeps = { codec: EventCodec; namespace: string; maxRecordBytes: number };

/**
 * One aggregate type as its single writer holds it: the latest snapshot of every aggregate, and how a command
 * becomes the event records and the state record one transaction writes.
 */
export class AggregateWriter<C extends Command, E extends Event, S> {
  readonly topic: { events: string; state: string };
  private snapshots = new Map<string, Snapshot<S>>();

  constructor(
    private readonly deps: WriterDeps,
    readonly definition: Aggregate<C, E, S>,
    private readonly log: Logger,
  ) {
    this.topic = { events: namespaced(deps.namespace, definition.events.name), state: namespaced(deps.namespace, definition.state.name) };
  }

  async restore(kafka: Parameters<typeof restoreSnapshots>[0], producer: Producer, groupPrefix: string): Promise<void> {
    this.snapshots = await restoreSnapshots<S>(kafka, producer, this.topic.state, groupPrefix);
    this.log.info({ aggregate: this.definition.name, aggregates: this.snapshots.size }, 'state restored from changelog');
  }

  /** Once the round's transaction has committed, its states are the latest. */
  remember(touched: Map<string, Touched<S>>): void {
    for (const [aggregateId, { snapshot }] of touched) this.snapshots.set(aggregateId, snapshot);
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
    if (events.length === 0) return { decision, events: [], eventBytes: 0 };
    const messages: Message[] = [];
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
export const stateMessages = <S>(touched: Map<string, Touched<S>>): Message[] =>
  [...touched].map(([aggregateId, { value, partition }]) => ({
    key: aggregateId,
    value,
    ...(partition === undefined ? {} : { partition }),
  }));
