import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { ClientBase } from 'pg';
import type { Event, RecordedEvent } from './message.ts';
import type { TopicSpec } from './topics.ts';

export type ProjectionMigration = { name: string; up: (db: Knex, schema: string) => Promise<void> };

export type ProjectionContext = { db: Knex.Transaction; schema: string; table: (name: string) => Knex.QueryBuilder };

/**
 * What a batch form writes with: the group's transaction as its plain `pg` connection (knex's builders are too dear per
 * event), and as the knex transaction for the events a batch form hands to its per-event handlers.
 */
export type BatchContext = { sql: ClientBase; schema: string; db: Knex.Transaction };

/**
 * The set-based form of a projection: the events of a group of batches, in log order, less those at or below the
 * checkpoint and those it does not handle, applied with a few statements for the whole group. It must leave the
 * rows `evolve` leaves when given the same events one by one (test/int/projection-batch.int.spec.ts).
 */
type BatchForm<E extends Event> = { applyBatch?: (events: RecordedEvent<E>[], context: BatchContext) => Promise<void> };

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
   * Projections with batch forms that name the same runner share one (one consumer, one Postgres transaction), whatever
   * their topics; without a name, those of the same topics share one (see `projectionGroups`).
   */
  runner?: string;
};

/**
 * A read model: which events it reads and how each one maps to SQL. The runner owns transactions
 * and checkpoints; a projection only says what an event means for its tables. This is the uniform
 * shape the runner consumes; projections are declared typed (`projection`, `projectionOf`).
 */
export type Projection = ReadModel &
  BatchForm<Event> & {
    canHandle: readonly string[];
    evolve: (event: RecordedEvent, context: ProjectionContext) => Promise<void>;
  };

/** A projection as declared: `canHandle` names event types of E, and `evolve` is given one of them, narrowed. */
export type TypedProjection<E extends Event> = ReadModel &
  BatchForm<E> & {
    canHandle: readonly E['type'][];
    evolve: (event: RecordedEvent<E>, context: ProjectionContext) => Promise<void>;
  };

/** The uniform projection of a typed declaration: its evolve is only ever handed the event types it can handle. */
export function projection<E extends Event>({ canHandle, evolve, applyBatch, ...readModel }: TypedProjection<E>): Projection {
  const handled: readonly string[] = canHandle;
  // The type names the event: a decoded event whose type E names is that member of E.
  const isHandled = (event: RecordedEvent): event is RecordedEvent<E> => handled.includes(event.type);
  return {
    ...readModel,
    canHandle,
    evolve: async (event, context) => {
      if (isHandled(event)) await evolve(event, context);
    },
    ...(applyBatch ? { applyBatch: (events, context) => applyBatch(events.filter(isHandled), context) } : {}),
  };
}

/** One handler per event type of E, each given its own event: how a projection maps events to SQL. */
export type EventHandlers<E extends Event> = {
  [T in E['type']]: (event: RecordedEvent<Extract<E, { type: T }>>, context: ProjectionContext) => Promise<unknown>;
};

type AnyHandler<E extends Event> = (event: RecordedEvent<E>, context: ProjectionContext) => Promise<unknown>;

/** Every handler, whichever event type it is keyed by (a handler is only ever called with its own type's events). */
const handlerList = <E extends Event>(handlers: EventHandlers<E>) => Object.entries(handlers) as [E['type'], AnyHandler<E>][];

/** A projection that is nothing but its handlers: it reads the event types they name and hands each to its own. */
export function projectionOf<E extends Event>({
  handlers,
  ...readModel
}: ReadModel & BatchForm<E> & { handlers: EventHandlers<E> }): Projection {
  const byType = new Map(handlerList(handlers));
  return projection<E>({
    ...readModel,
    canHandle: [...byType.keys()],
    evolve: async (event, context) => {
      await byType.get(event.type)?.(event, context);
    },
  });
}

/** The same handlers, each followed by `then`: what every one of these events also means for the read model. */
export function followedBy<E extends Event>(handlers: EventHandlers<E>, then: AnyHandler<E>): EventHandlers<E> {
  const followed = handlerList(handlers).map(([type, handler]): [E['type'], AnyHandler<E>] => [
    type,
    async (event, context) => {
      await handler(event, context);
      await then(event, context);
    },
  ]);
  return Object.fromEntries(followed) as unknown as EventHandlers<E>;
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

/** The pg connection a knex transaction runs on: the batch forms write through it, inside the same transaction. */
export async function batchContextFor(db: Knex.Transaction, schema: string): Promise<BatchContext> {
  // knex's transaction client hands out its one connection (knex/lib/execution/transaction.js, makeTxClient).
  const sql = (await db.client.acquireConnection()) as ClientBase;
  return { sql, schema, db };
}

/**
 * A knex whose queries run on one connection, inside a transaction its caller began and ends itself: what a batch form
 * reaches through `BatchContext.db` goes through the batch's own transaction. knex's query methods (`table`, `select`,
 * `insert`, …) all start from `this.queryBuilder()`, so binding it and `raw` (and a call of the knex itself) binds them
 * all; what would open a transaction or a connection of its own is refused rather than run outside the batch.
 */
export function knexOn(db: Knex, connection: ClientBase): Knex.Transaction {
  const bound = <Q extends { connection: (connection: unknown) => Q }>(query: Q): Q => query.connection(connection);
  const on: Record<PropertyKey, unknown> = {
    queryBuilder: () => bound(db.queryBuilder()),
    raw: (...args: Parameters<Knex['raw']>) => bound(db.raw(...args)),
  };
  const refused = new Set<PropertyKey>(['transaction', 'transactionProvider', 'batchInsert', 'schema', 'destroy', 'initialize']);
  return new Proxy(db, {
    apply: (_target, _self, args: Parameters<Knex>) => bound(db(...args)),
    get: (target, property, receiver) => {
      if (refused.has(property))
        throw new Error(`knex's ${String(property)} is not for a projection batch: it runs in the batch's own transaction`);
      return Object.hasOwn(on, property) ? on[property] : Reflect.get(target, property, receiver);
    },
  }) as unknown as Knex.Transaction;
}

/** Every projection lives in its own Postgres schema, so a rebuild can fill a fresh one and swap it in. */
export const liveSchema = (projection: Pick<Projection, 'name'>): string => `rm_${projection.name}`;

export const contextFor = (db: Knex.Transaction, schema: string): ProjectionContext => ({
  db,
  schema,
  table: (name: string) => db(`${schema}.${name}`),
});

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
