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
  {
    name: '003-seller-settings',
    up: async (db, schema) => {
      // Issue 26: what agents and merchant listings need of the seller; requested_at: a feed asked for before its first build.
      await db.schema.withSchema(schema).alterTable('catalog_feeds', (t) => {
        t.text('seller_url');
        t.text('store_country');
        t.jsonb('target_countries').notNullable().defaultTo('[]');
        t.text('privacy_policy_url');
        t.text('terms_of_service_url');
        t.text('return_policy_url');
        t.integer('return_window_days');
        t.text('item_condition');
        t.text('shipping_price');
        t.text('shipping_currency');
        t.timestamp('requested_at', { useTz: true, precision: 3 });
      });
    },
  },
];
