import type { ProjectionMigration } from '../../ledger/projection.ts';

export const auditMigrations: ProjectionMigration[] = [
  {
    name: '001-audit-events',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).createTable('audit_events', (t) => {
        t.uuid('id').primary();
        t.uuid('tenant_id').notNullable();
        t.uuid('org_id').notNullable();
        t.text('actor_email');
        t.text('action').notNullable();
        t.text('entity_type').notNullable();
        t.uuid('entity_id').notNullable();
        t.jsonb('details').notNullable();
        t.text('ip_address');
        t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
        // Offset order breaks ties between events of the same millisecond, identically on every rebuild.
        t.text('log_topic').notNullable();
        t.integer('log_partition').notNullable();
        t.bigInteger('log_offset').notNullable();
        t.index(['tenant_id', 'org_id', 'created_at']);
      });
    },
  },
];
