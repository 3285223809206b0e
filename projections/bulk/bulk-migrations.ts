import type { ProjectionMigration } from '../../ledger/projection.ts';
import { instant, ownedRecord } from '../table-columns.ts';

export const bulkMigrations: ProjectionMigration[] = [
  {
    name: '001-bulk-jobs',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).createTable('jobs', (t) => {
        ownedRecord(t);
        t.text('job_type').notNullable();
        t.text('status').notNullable();
        t.integer('total_items');
        t.integer('processed_items');
        t.integer('failed_items');
        t.integer('item_count').notNullable();
        t.integer('chunk_count').notNullable();
        t.bigInteger('payload_bytes').notNullable();
        t.text('created_by');
        t.jsonb('actor').notNullable();
        instant(t, 'created_at');
        instant(t, 'updated_at');
        t.index(['tenant_id', 'org_id', 'job_type', 'created_at']);
        t.index(['status', 'created_at']);
      });
      // A job's payload while it is needed: attached chunks, deleted when the job ends (the log keeps them).
      await db.schema.withSchema(schema).createTable('chunks', (t) => {
        t.uuid('job_id').notNullable();
        t.integer('chunk').notNullable();
        t.integer('first_index').notNullable();
        t.integer('item_count').notNullable();
        t.text('items').notNullable();
        t.primary(['job_id', 'chunk']);
      });
      await db.schema.withSchema(schema).createTable('item_errors', (t) => {
        t.uuid('job_id').notNullable();
        t.integer('item_index').notNullable();
        t.text('code').notNullable();
        t.text('message').notNullable();
        t.uuid('product_id');
        t.primary(['job_id', 'item_index']);
      });
    },
  },
];
