import type { ProjectionMigration } from '../../ledger/projection.ts';
import { instant, ownedRecord } from '../table-columns.ts';

export const connectionsMigrations: ProjectionMigration[] = [
  {
    name: '001-connections',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).createTable('connections', (t) => {
        ownedRecord(t);
        t.text('unified_connection_id').notNullable().unique();
        t.text('provider').notNullable();
        t.text('category').notNullable();
        t.text('status').notNullable();
        t.text('status_reason');
        t.text('webhook_subscription_id');
        instant(t, 'created_at');
        instant(t, 'updated_at');
        t.index(['tenant_id', 'org_id', 'status', 'created_at']);
      });
    },
  },
  {
    name: '002-default-location',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).alterTable('connections', (t) => {
        t.uuid('default_location_id');
      });
    },
  },
  {
    name: '003-webhook-problem',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).alterTable('connections', (t) => {
        t.text('webhook_problem');
      });
    },
  },
];
