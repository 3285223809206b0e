import type { ProjectionMigration } from '../../ledger/projection.ts';

export const catalogMigrations: ProjectionMigration[] = [
  {
    name: '001-products-and-variants',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).createTable('products', (t) => {
        t.uuid('id').primary();
        t.uuid('tenant_id').notNullable();
        t.uuid('org_id').notNullable();
        t.text('title').notNullable();
        t.text('description');
        t.text('category');
        t.text('status').notNullable();
        t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
        t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable();
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
        t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
        t.index(['tenant_id', 'org_id']);
      });
    },
  },
];
