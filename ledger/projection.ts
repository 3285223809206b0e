import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Event, RecordedEvent } from './message.ts';
import type { TopicSpec } from './topics.ts';

export type ProjectionMigration = { name: string; up: (db: Knex, schema: string) => Promise<void> };

export type ProjectionContext = { db: Knex.Transaction; schema: string; table: (name: string) => Knex.QueryBuilder };

/**
 * A read model: which events it reads and how each one maps to SQL. The runner owns transactions
 * and checkpoints; a projection only says what an event means for its tables.
 */
export type Projection = {
  name: string;
  topics: TopicSpec[];
  migrations: ProjectionMigration[];
  canHandle: readonly string[];
  evolve: (event: RecordedEvent, context: ProjectionContext) => Promise<void>;
};

/** One handler per event type of E, each given its own event: how a projection maps events to SQL. */
export type EventHandlers<E extends Event> = {
  [T in E['type']]: (event: RecordedEvent<Extract<E, { type: T }>>, context: ProjectionContext) => Promise<unknown>;
};

/** A projection that is nothing but its handlers: it reads the event types they name and hands each to its own. */
export function projectionOf<E extends Event>({ handlers, ...declaration }: Omit<Projection, 'canHandle' | 'evolve'> & { handlers: EventHandlers<E> }): Projection {
  const byType = handlers as unknown as Record<string, (event: RecordedEvent, context: ProjectionContext) => Promise<unknown>>;
  return {
    ...declaration,
    canHandle: Object.keys(handlers),
    evolve: async (event, context) => {
      await byType[event.type]?.(event, context);
    },
  };
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
      getMigration: async (migration: ProjectionMigration) => ({ up: (knex: Knex) => migration.up(knex, schema), down: async () => undefined }),
    },
  });
  const row = (await db(`${schema}.generation`).first('id')) as { id: string };
  return row.id;
}
