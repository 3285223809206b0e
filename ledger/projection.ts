import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { ClientBase } from 'pg';
import type { Event, RecordedEvent } from './message.ts';
import type { TopicSpec } from './topics.ts';

export type ProjectionMigration = { name: string; up: (db: Knex, schema: string) => Promise<void> };

/**
 * What a projection writes with, inside the runner's transaction: the transaction's own `pg` connection (`sql`, for the
 * set-based statements: knex's builders are too dear per event) and the same connection as a knex (`db`, `table`) for
 * the projections that write event by event.
 */
/** knex as a projection's batch may use it: queries on the batch's connection, inside its transaction, and nothing else. */
export type ProjectionDb = {
  table: (name: string) => Knex.QueryBuilder;
  raw: (statement: string, bindings?: readonly Knex.RawBinding[]) => Knex.Raw;
};

export type ProjectionContext = { sql: ClientBase; schema: string; db: ProjectionDb; table: (name: string) => Knex.QueryBuilder };

/**
 * Where a read model lives and how its tables are made. `awaitedOn`: the topics whose writes wait for this read model
 * before they answer (read-your-writes); all of `topics` unless it says fewer (a queue a worker reads, say, which no
 * write's answer shows).
 */
type ReadModel = {
  name: string;
  topics: TopicSpec[];
  migrations: ProjectionMigration[];
  awaitedOn?: TopicSpec[];
  /**
   * Projections that name the same runner share one (one consumer, one Postgres transaction), whatever their topics;
   * without a name, those of the same topics share one (see `projectionGroups`).
   */
  runner?: string;
  /**
   * `gathered`: the writes that wait for this read model are few (a saved connection), and most of what it reads no
   * write waits for (the catalog's events, for the push queue): its runner fetches them in fewer, larger rounds, an
   * awaited write waiting up to 50 ms longer (GATHERED_FETCH). Default `prompt`.
   */
  fetch?: 'prompt' | 'gathered';
};

/**
 * A read model: which events it reads and what a batch of them means for its tables. `handle` is given the events of
 * a group of batches, in log order, less those at or below the checkpoint and those it does not handle; the runner
 * owns the transaction and the checkpoints. A batch of one event is a batch too: the runner names a poison event by
 * applying the failed group one event at a time, so a batch must leave the rows its events leave in any grouping.
 * This is the uniform shape the runner consumes; projections are declared typed (`projection`, `projectionOf`).
 */
export type Projection = ReadModel & {
  canHandle: readonly string[];
  handle: (events: RecordedEvent[], context: ProjectionContext) => Promise<void>;
  /**
   * The key under which a write waits for an outcome this event may decide (an order's id), if any: the live runner
   * announces the keys of the events each of its transactions applied, and a wait under a key reads again only then.
   */
  awaitKeyOf?: (event: RecordedEvent) => string | undefined;
};

/** A projection as declared: `canHandle` names event types of E, and `handle` is given a batch of them, narrowed. */
export type TypedProjection<E extends Event> = ReadModel & {
  canHandle: readonly E['type'][];
  handle: (events: RecordedEvent<E>[], context: ProjectionContext) => Promise<void>;
  awaitKeyOf?: (event: RecordedEvent<E>) => string | undefined;
};

/** The uniform projection of a typed declaration: its `handle` is only ever handed the event types it can handle. */
export function projection<E extends Event>({ canHandle, handle, awaitKeyOf, ...readModel }: TypedProjection<E>): Projection {
  const handled: readonly string[] = canHandle;
  // The type names the event: a decoded event whose type E names is that member of E.
  const isHandled = (event: RecordedEvent): event is RecordedEvent<E> => handled.includes(event.type);
  return {
    ...readModel,
    canHandle,
    handle: async (events, context) => {
      const own = events.filter(isHandled);
      if (own.length > 0) await handle(own, context);
    },
    ...(awaitKeyOf ? { awaitKeyOf: (event: RecordedEvent) => (isHandled(event) ? awaitKeyOf(event) : undefined) } : {}),
  };
}

/** One handler per event type of E, each given its own event: how a projection maps one event to SQL. */
export type EventHandlers<E extends Event> = {
  [T in E['type']]: (event: RecordedEvent<Extract<E, { type: T }>>, context: ProjectionContext) => Promise<unknown>;
};

type AnyHandler<E extends Event> = (event: RecordedEvent<E>, context: ProjectionContext) => Promise<unknown>;

/** The handlers as one function for every event of E (a handler is only ever called with its own type's events). */
export function handlerOf<E extends Event>(
  handlers: EventHandlers<E>,
): (event: RecordedEvent<E>, context: ProjectionContext) => Promise<void> {
  const byType = new Map(Object.entries(handlers) as [E['type'], AnyHandler<E>][]);
  return async (event, context) => {
    await byType.get(event.type)?.(event, context);
  };
}

/**
 * A projection whose batch is its events applied one after another, each by the handler of its type: for read models
 * of few events, where set-based SQL buys nothing.
 */
export function projectionOf<E extends Event>({ handlers, ...readModel }: ReadModel & { handlers: EventHandlers<E> }): Projection {
  const handle = handlerOf(handlers);
  return projection<E>({
    ...readModel,
    canHandle: Object.keys(handlers) as E['type'][],
    handle: async (events, context) => {
      for (const event of events) await handle(event, context);
    },
  });
}

/** One function per event type of E, each given its own event: what each event means as a value (a row, say). */
export type EventMappers<E extends Event, R> = {
  [T in E['type']]: (event: RecordedEvent<Extract<E, { type: T }>>) => R;
};

/** The event types the mappers are keyed by: what a projection built on them can handle. */
export const mappedTypes = <E extends Event, R>(mappers: EventMappers<E, R>): E['type'][] => Object.keys(mappers) as E['type'][];

/** One function for every event of E: the mapper of the event's own type, applied to it. */
export function mapperOf<E extends Event, R>(mappers: EventMappers<E, R>): (event: RecordedEvent<E>) => R {
  // A mapper is only ever called with its own type's events.
  const byType = new Map(Object.entries(mappers) as [string, (event: RecordedEvent<E>) => R][]);
  return (event) => {
    const map = byType.get(event.type);
    if (!map) throw new Error(`no mapper for ${event.type}`);
    return map(event);
  };
}

/** Every projection lives in its own Postgres schema, so a rebuild can fill a fresh one and swap it in. */
export const liveSchema = (projection: Pick<Projection, 'name'>): string => `rm_${projection.name}`;

/**
 * The context of a projection writing in `schema` on `connection`, inside a transaction its caller began: its queries
 * are built by knex and run on that connection (knex's documented `.connection()`), never on a pool of their own.
 */
export function projectionContext(db: Knex, connection: ClientBase, schema: string): ProjectionContext {
  const on: ProjectionDb = {
    table: (name) => db.table(name).connection(connection),
    raw: (statement, bindings) => (bindings === undefined ? db.raw(statement) : db.raw(statement, bindings)).connection(connection),
  };
  return { sql: connection, schema, db: on, table: (name: string) => on.table(`${schema}.${name}`) };
}

/** Creates the schema, its checkpoint and generation tables, and runs the projection's migrations. Idempotent. */
export async function prepareProjectionSchema(db: Knex, projection: Projection, schema: string): Promise<string> {
  await db.raw('create schema if not exists ??', [schema]);
  await db.raw(
    `create table if not exists ??.checkpoints (topic text not null, partition int not null, "offset" bigint not null, updated_at timestamptz not null default now(), primary key (topic, partition))`,
    [schema],
  );
  await db.raw(`create table if not exists ??.generation (id uuid primary key, created_at timestamptz not null default now())`, [schema]);
  await db.raw(`insert into ??.generation (id) select ? where not exists (select 1 from ??.generation)`, [schema, randomUUID(), schema]);
  await db.migrate.latest({
    schemaName: schema,
    tableName: 'migrations',
    migrationSource: {
      getMigrations: async () => projection.migrations,
      getMigrationName: (migration: ProjectionMigration) => migration.name,
      getMigration: async (migration: ProjectionMigration) => ({
        up: (knex: Knex) => migration.up(knex, schema),
        down: async () => undefined,
      }),
    },
  });
  const row = (await db(`${schema}.generation`).first('id')) as { id: string };
  return row.id;
}
