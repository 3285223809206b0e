import type { ProjectionMigration } from '../../ledger/projection.ts';
import { ownedRecord } from '../table-columns.ts';

export const feedMigrations: ProjectionMigration[] = [
  {
    name: '001-catalog-feeds',
    up: async (db, schema) => {
      // One row per tenant and org: its settings, and the files currently served (null until the first publication).
      await db.schema.withSchema(schema).createTable('catalog_feeds', (t) => {
        ownedRecord(t);
        t.text('seller_name');
        t.text('product_url_template');
        t.timestamp('configured_at', { useTz: true, precision: 3 });
        t.text('content_hash');
        t.text('json_ld_key');
        t.text('jsonl_key');
        t.integer('product_count');
        t.integer('item_count');
        t.timestamp('published_at', { useTz: true, precision: 3 });
        t.unique(['tenant_id', 'org_id']);
      });
    },
  },
  {
    name: '002-feed-files',
    up: async (db, schema) => {
      // Every file a publication made that is not pruned yet; replaced_at is null while it is served.
      await db.schema.withSchema(schema).createTable('feed_files', (t) => {
        t.text('key').primary();
        t.uuid('feed_id').notNullable();
        t.uuid('tenant_id').notNullable();
        t.uuid('org_id').notNullable();
        t.timestamp('published_at', { useTz: true, precision: 3 }).notNullable();
        t.timestamp('replaced_at', { useTz: true, precision: 3 });
        t.index(['feed_id', 'replaced_at']);
      });
    },
  },
];
