import type { Knex } from 'knex';

/** The columns of a record a tenant's org owns: its id and whose it is. */
export const ownedRecord = (t: Knex.CreateTableBuilder): void => {
  t.uuid('id').primary();
  t.uuid('tenant_id').notNullable();
  t.uuid('org_id').notNullable();
};

/** A moment an event recorded: events carry epoch milliseconds, hence the precision. */
export const instant = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 }).notNullable();
