import type { ProjectionMigration } from '../../ledger/projection.ts';
import { instant, ownedRecord } from '../table-columns.ts';

export const omsMigrations: ProjectionMigration[] = [
  {
    name: '001-orders-and-inventory',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).createTable('orders', (t) => {
        ownedRecord(t);
        t.text('status').notNullable();
        t.text('idempotency_key').notNullable();
        t.text('currency').notNullable();
        t.text('customer_id');
        t.text('sales_channel');
        t.text('platform');
        t.text('payment_provider').notNullable();
        t.text('payment_transaction_id').notNullable();
        t.text('payment_status').notNullable();
        // Money stays the exact decimal text the events carry.
        for (const column of ['subtotal', 'discount_total', 'shipping_total', 'tax_total', 'total']) t.text(column).notNullable();
        t.jsonb('tags').notNullable();
        t.jsonb('line_items').notNullable();
        t.jsonb('rejection');
        instant(t, 'created_at');
        instant(t, 'updated_at');
        t.index(['tenant_id', 'org_id', 'created_at']);
      });
      await db.schema.withSchema(schema).createTable('order_status_history', (t) => {
        t.uuid('order_id').notNullable();
        // Events of one order share a partition, so their offset orders them.
        t.bigInteger('offset').notNullable();
        t.text('status').notNullable();
        t.text('requested_status');
        t.text('outcome').notNullable();
        t.text('reason');
        instant(t, 'at');
        t.primary(['order_id', 'offset']);
      });
      // Which orders' reservations this read model has applied (levels move in the same transaction).
      await db.schema.withSchema(schema).createTable('stock_reservations', (t) => {
        t.uuid('order_id').primary();
        t.text('status').notNullable();
        instant(t, 'updated_at');
      });
      await db.schema.withSchema(schema).createTable('stock_locations', (t) => {
        ownedRecord(t);
        t.text('name').notNullable();
        instant(t, 'created_at');
        t.index(['tenant_id', 'org_id', 'created_at']);
      });
      await db.schema.withSchema(schema).createTable('stock_levels', (t) => {
        t.uuid('tenant_id').notNullable();
        t.uuid('org_id').notNullable();
        t.uuid('variant_id').notNullable();
        t.uuid('location_id').notNullable();
        t.integer('available').notNullable();
        t.integer('reserved').notNullable();
        instant(t, 'updated_at');
        t.primary(['tenant_id', 'org_id', 'variant_id', 'location_id']);
      });
    },
  },
];
