import type { ProjectionMigration } from '../../ledger/projection.ts';
import { instant, ownedRecord } from '../table-columns.ts';

export const validationMigrations: ProjectionMigration[] = [
  {
    name: '001-validation-issues',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).createTable('validation_issues', (t) => {
        ownedRecord(t);
        t.uuid('product_id').notNullable();
        t.text('issue_type').notNullable();
        t.text('severity').notNullable();
        t.text('message').notNullable();
        t.boolean('resolved').notNullable();
        instant(t, 'created_at');
        instant(t, 'updated_at');
        t.index(['tenant_id', 'org_id', 'resolved', 'created_at']);
      });
    },
  },
  {
    // A bulk job's failed item is an issue too; it names the job and the item, and a product only when the item does.
    name: '002-bulk-item-issues',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).alterTable('validation_issues', (t) => {
        t.uuid('product_id').nullable().alter();
        t.uuid('bulk_job_id');
        t.integer('item_index');
      });
    },
  },
];
