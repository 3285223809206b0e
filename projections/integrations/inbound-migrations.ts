import type { ProjectionMigration } from '../../ledger/projection.ts';

export const inboundMigrations: ProjectionMigration[] = [
  {
    name: '001-dead-letters',
    up: async (db, schema) => {
      // Text ids: what the events carry is listed as it is, never refused by a column type.
      await db.schema.withSchema(schema).createTable('dead_letters', (t) => {
        t.text('id').primary();
        t.uuid('tenant_id').notNullable();
        t.uuid('org_id').notNullable();
        t.text('connection_id').notNullable();
        t.text('inbox_id').notNullable();
        t.text('delivery_id').notNullable();
        t.text('event').notNullable();
        t.text('external_id');
        t.text('reason').notNullable();
        /** DEAD_LETTERED until re-driven; a re-driven delivery that fails again is DEAD_LETTERED again. */
        t.text('status').notNullable();
        t.integer('times_dead_lettered').notNullable().defaultTo(1);
        t.timestamp('dead_lettered_at', { useTz: true, precision: 3 }).notNullable();
        t.timestamp('redriven_at', { useTz: true, precision: 3 });
        t.index(['tenant_id', 'org_id', 'connection_id', 'dead_lettered_at']);
      });
    },
  },
];
