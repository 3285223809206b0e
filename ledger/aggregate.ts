import type { Command, CommandInput, Decider, Event } from './message.ts';
import { topic, topics, type TopicSpec } from './topics.ts';

/** An aggregate type: its single writer's topics, its decider, and where a command names the aggregate it is for. */
export type Aggregate<C extends Command, E extends Event, S> = {
  /** Lower-case noun used in error messages and in consumer-group and transactional ids. */
  name: string;
  commands: TopicSpec;
  events: TopicSpec;
  state: TopicSpec;
  decider: Decider<C, E, S>;
  aggregateIdOf(command: Pick<C, 'data'>): string;
  /** Aggregates decided in this one's transaction, from its events (see `followedBy`). */
  followers?: readonly Follower[];
};

/**
 * An aggregate keyed by its leader's id, so on the same partition, whose only commands derive from the leader's
 * events: its single writer is the leader's processor, which decides them in the same transaction as the events
 * they come from (one hop and one transaction fewer than a router between two processors).
 */
export type Follower = { aggregate: SomeAggregate; commandsFor(event: Event): CommandInput<Command>[] };

/** The leader, deciding `follower`'s commands from its events in the same transaction; the follower gets no processor of its own. */
export function followedBy<C extends Command, E extends Event, S, FC extends Command, FE extends Event, FS>(
  leader: Aggregate<C, E, S>,
  follower: Aggregate<FC, FE, FS>,
  commandsFor: (event: E) => CommandInput<FC>[],
): Aggregate<C, E, S> {
  const entry: Follower = { aggregate: follower, commandsFor };
  return { ...leader, followers: [...(leader.followers ?? []), entry] };
}

/** The aggregates that need a processor of their own: every one that follows no other. */
export const leadersOf = (aggregates: readonly SomeAggregate[]): SomeAggregate[] => {
  const followers = new Set(aggregates.flatMap((aggregate) => (aggregate.followers ?? []).map((f) => f.aggregate.name)));
  return aggregates.filter((aggregate) => !followers.has(aggregate.name));
};

/** What the runtime holds: aggregates of any command type, each decider only ever given its own aggregate's commands. */
export type SomeAggregate = Aggregate<Command, Event, unknown>;

/** The names of the data fields, shared by every command of `C`, that hold a string. */
type IdField<C extends Command, K extends PropertyKey = keyof C['data']> = K extends keyof C['data']
  ? C['data'][K] extends string
    ? K
    : never
  : never;

/** `Types`, provided it names every event type: an event the catalog misses could not be encoded. */
type EveryEventType<E extends Event, Types extends readonly string[]> = [Exclude<E['type'], Types[number]>] extends [never]
  ? Types
  : Types & { missing: Exclude<E['type'], Types[number]> };

export type AggregateDeclaration<C extends Command, E extends Event, S, Types extends readonly E['type'][]> = {
  name: string;
  /** Names the topics: `<stream>.commands.v1`, `<stream>.events.v1` and `<stream>.state.v1`. */
  stream: string;
  decider: Decider<C, E, S>;
  /** The command field naming the aggregate: every command's Kafka key and the aggregate's id. */
  id: NoInfer<IdField<C>>;
  /** The Avro namespace of the events and their record names, in the order the event catalog lists them. */
  events: { namespace: string; types: EveryEventType<NoInfer<E>, Types> };
};

/** Declares an aggregate once; its topics, their keys and its id function follow from the declaration. */
export function defineAggregate<C extends Command, E extends Event, S, const Types extends readonly E['type'][]>(
  declaration: AggregateDeclaration<C, E, S, Types>,
): Aggregate<C, E, S> {
  const { name, stream, decider, id, events } = declaration;
  const key = String(id);
  return {
    name,
    commands: topic(`${stream}.commands.v1`, 'commands', key),
    events: topic(
      `${stream}.events.v1`,
      'events',
      key,
      events.types.map((type) => `${events.namespace}.${type}`),
    ),
    state: topic(`${stream}.state.v1`, 'state', key),
    decider,
    aggregateIdOf: (command) => (command.data as Record<string, string>)[key] as string,
  };
}

/** Every topic the ledger writes: each aggregate's three, then the replies. */
export const topicsOf = (aggregates: readonly SomeAggregate[]): TopicSpec[] => [
  ...aggregates.flatMap(({ commands, events, state }) => [commands, events, state]),
  topics.commandReplies,
];
