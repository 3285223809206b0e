/** The shapes every aggregate shares: commands in, events out, with the envelope that travels with them. */
export type Actor = { userId: string | null; email: string | null; ip: string | null };

export type CommandMetadata = {
  commandId: string;
  tenantId: string;
  orgId: string;
  actor: Actor;
  /** Epoch milliseconds at the edge; deciders take time from here, never from the clock. */
  issuedAt: number;
  correlationId: string;
  /** Present when the client may retry the request (`Idempotency-Key`): see ledger/idempotency.ts. */
  idempotency?: IdempotentRequest;
  /** Posted, not sent: nobody waits for the decision, so its processor writes no reply (a record fewer per command). */
  noReply?: true;
  /**
   * The bus awaiting the reply (its process's address, see ledger/reply-handover.ts): a processor of the same process
   * hands the reply over once its transaction commits, and writes no record of it.
   */
  replyTo?: string;
};

/**
 * A retryable request: `key` names what the client's Idempotency-Key creates (the new record's id, so keys of
 * different kinds of record stay apart in an aggregate holding several), `requestHash` what was asked for.
 */
export type IdempotentRequest = { key: string; requestHash: string };

export type Command<Type extends string = string, Data = unknown> = { type: Type; data: Data; metadata: CommandMetadata };

/** What a sender says of a command (the edge or a router adds the metadata); one member of the union per command type. */
export type CommandInput<C extends Command> = C extends Command ? Pick<C, 'type' | 'data'> : never;

export type Event<Type extends string = string, Data = unknown> = { type: Type; data: Data };

export type EventEnvelope = {
  eventId: string;
  eventType: string;
  aggregateId: string;
  tenantId: string;
  orgId: string;
  actor: Actor;
  occurredAt: number;
  correlationId: string;
  causationId: string;
  schemaVersion: number;
};

export type LogPosition = { topic: string; partition: number; offset: string };

export type RecordedEvent<E extends Event = Event> = E & { envelope: EventEnvelope; position: LogPosition };

/** Methods rather than function properties, so that the runtime can hold deciders of different aggregates in one list. */
export type Decider<C extends Command, E extends Event, S> = {
  initialState(): S;
  evolve(state: S, event: E): S;
  decide(command: C, state: S): E[];
};
