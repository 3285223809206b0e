import type { ProjectionMigration } from '../../ledger/projection.ts';
import { instant, ownedRecord } from '../table-columns.ts';

export const webhookSecretsMigrations: ProjectionMigration[] = [
  {
    name: '001-webhook-secrets',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).createTable('webhook_secrets', (t) => {
        ownedRecord(t);
        t.integer('version').notNullable();
        t.integer('previous_version').notNullable();
        instant(t, 'previous_valid_until');
        instant(t, 'rotated_at');
        t.unique(['tenant_id', 'org_id']);
      });
    },
  },
];
