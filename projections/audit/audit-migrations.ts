import type { ProjectionMigration } from '../../ledger/projection.ts';
import { instant, ownedRecord } from '../table-columns.ts';

export const auditMigrations: ProjectionMigration[] = [
  {
    name: '001-audit-events',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).createTable('audit_events', (t) => {
        ownedRecord(t);
        t.text('actor_email');
        t.text('action').notNullable();
        t.text('entity_type').notNullable();
        t.uuid('entity_id').notNullable();
        t.jsonb('details').notNullable();
        t.text('ip_address');
        instant(t, 'created_at');
        // Offset order breaks ties between events of the same millisecond, identically on every rebuild.
        t.text('log_topic').notNullable();
        t.integer('log_partition').notNullable();
        t.bigInteger('log_offset').notNullable();
        t.index(['tenant_id', 'org_id', 'created_at']);
      });
    },
  },
];
