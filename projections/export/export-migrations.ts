import type { ProjectionMigration } from '../../ledger/projection.ts';
import { instant, ownedRecord } from '../table-columns.ts';

export const exportMigrations: ProjectionMigration[] = [
  {
    name: '001-exports',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).createTable('exports', (t) => {
        ownedRecord(t);
        t.uuid('catalog_exports_id').notNullable();
        t.text('status').notNullable();
        /** Requests this export serves: the first, and those that joined it while it waited. */
        t.integer('requests').notNullable();
        t.text('requested_by');
        t.jsonb('actor').notNullable();
        t.integer('product_count');
        t.integer('draft_count');
        t.integer('excluded_count');
        t.bigInteger('bytes');
        t.text('manifest_key');
        t.text('products_key');
        t.text('taxonomy_key');
        t.jsonb('position');
        t.text('error');
        t.text('notify_webhook_url');
        t.text('notify_email');
        instant(t, 'requested_at');
        t.timestamp('started_at', { useTz: true });
        t.timestamp('finished_at', { useTz: true });
        instant(t, 'updated_at');
        t.index(['tenant_id', 'org_id', 'requested_at']);
        t.index(['status', 'requested_at']);
      });
      await db.schema.withSchema(schema).createTable('notices', (t) => {
        t.uuid('export_id').notNullable();
        t.text('channel').notNullable();
        t.boolean('delivered').notNullable();
        t.integer('attempts').notNullable();
        t.text('detail');
        instant(t, 'recorded_at');
        t.primary(['export_id', 'channel']);
      });
      await db.schema.withSchema(schema).createTable('notification_settings', (t) => {
        t.uuid('tenant_id').notNullable();
        t.uuid('org_id').notNullable();
        t.text('webhook_url');
        t.text('email');
        instant(t, 'updated_at');
        t.primary(['tenant_id', 'org_id']);
      });
    },
  },
];
