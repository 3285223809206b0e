import type { Knex } from 'knex';
import type { ProjectionMigration } from '../../ledger/projection.ts';
import { instant, ownedRecord } from '../table-columns.ts';

export const catalogMigrations: ProjectionMigration[] = [
  {
    name: '001-products-and-variants',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).createTable('products', (t) => {
        ownedRecord(t);
        t.text('title').notNullable();
        t.text('description');
        t.text('category');
        t.text('status').notNullable();
        instant(t, 'created_at');
        instant(t, 'updated_at');
        t.index(['tenant_id', 'org_id', 'created_at']);
      });
      await db.schema.withSchema(schema).createTable('variants', (t) => {
        t.uuid('id').primary();
        t.uuid('product_id').notNullable().index();
        t.uuid('tenant_id').notNullable();
        t.uuid('org_id').notNullable();
        t.text('sku');
        t.text('barcode');
        // Kept as the exact decimal text the event carries; numeric would re-scale it.
        t.text('price');
        t.text('currency');
        instant(t, 'created_at');
        t.index(['tenant_id', 'org_id']);
      });
    },
  },
  {
    name: '002-taxonomy-and-brands',
    up: async (db, schema) => {
      const owned = (t: Knex.CreateTableBuilder) => {
        ownedRecord(t);
        t.text('name').notNullable();
        t.text('description');
      };
      const timestamps = (t: Knex.CreateTableBuilder) => {
        instant(t, 'created_at');
        instant(t, 'updated_at');
        t.index(['tenant_id', 'org_id', 'created_at']);
      };
      await db.schema.withSchema(schema).createTable('categories', (t) => {
        owned(t);
        t.text('slug').notNullable();
        t.uuid('parent_id');
        timestamps(t);
      });
      await db.schema.withSchema(schema).createTable('brands', (t) => {
        owned(t);
        t.text('logo_url');
        timestamps(t);
      });
      await db.schema.withSchema(schema).createTable('attributes', (t) => {
        owned(t);
        t.text('slug').notNullable();
        t.text('type').notNullable();
        t.jsonb('options').notNullable();
        timestamps(t);
      });
      await db.schema.withSchema(schema).createTable('attribute_groups', (t) => {
        owned(t);
        t.jsonb('attribute_ids').notNullable();
        timestamps(t);
      });
      await db.schema.withSchema(schema).createTable('templates', (t) => {
        owned(t);
        t.uuid('category_id');
        t.jsonb('attribute_group_ids').notNullable();
        t.jsonb('required_attribute_ids').notNullable();
        timestamps(t);
      });
    },
  },
  {
    name: '003-product-pim-fields-quality-and-media',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).alterTable('products', (t) => {
        t.text('sku');
        t.text('brand');
        t.uuid('template_id');
        t.integer('quality_score');
      });
      await db.schema.withSchema(schema).createTable('media', (t) => {
        ownedRecord(t);
        t.uuid('product_id').notNullable().index();
        t.uuid('variant_id');
        t.text('url').notNullable();
        t.text('alt_text');
        t.integer('sort_order').notNullable();
        instant(t, 'created_at');
        instant(t, 'updated_at');
        t.index(['tenant_id', 'org_id', 'sort_order']);
      });
    },
  },
  {
    name: '004-product-attribute-values',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).alterTable('products', (t) => {
        t.jsonb('attributes').notNullable().defaultTo('{}');
      });
    },
  },
];
