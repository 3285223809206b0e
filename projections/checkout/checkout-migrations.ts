import type { ProjectionMigration } from '../../ledger/projection.ts';
import { instant, ownedRecord } from '../table-columns.ts';

export const checkoutMigrations: ProjectionMigration[] = [
  {
    name: '001-checkout-sessions',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).createTable('checkout_sessions', (t) => {
        ownedRecord(t);
        t.text('status').notNullable();
        t.text('currency').notNullable();
        // The cart as its last event priced it (lines, options, selection, fulfillment details, buyer).
        t.jsonb('cart').notNullable();
        // Money stays the exact decimal text the events carry.
        for (const column of ['subtotal', 'shipping_total', 'total']) t.text(column).notNullable();
        t.uuid('order_id');
        t.integer('attempt').notNullable();
        t.jsonb('last_failure');
        // The order_create notice's outcome, once recorded (null: owed once the session is completed).
        t.jsonb('notice');
        instant(t, 'created_at');
        instant(t, 'updated_at');
        t.index(['status']);
      });
      // The order_update notices recorded, one per status the session's order moved to.
      await db.schema.withSchema(schema).createTable('order_update_notices', (t) => {
        t.uuid('session_id').notNullable();
        t.text('status').notNullable();
        t.boolean('delivered').notNullable();
        t.integer('attempts').notNullable();
        t.text('detail');
        instant(t, 'recorded_at');
        t.primary(['session_id', 'status']);
      });
      await db.schema.withSchema(schema).createTable('agent_checkouts', (t) => {
        t.uuid('tenant_id').notNullable();
        t.uuid('org_id').notNullable();
        t.text('webhook_url');
        instant(t, 'updated_at');
        t.primary(['tenant_id', 'org_id']);
      });
    },
  },
  {
    // The stock a completion asked to reserve ahead of its order (JSON text, as the event carries it; null: none).
    name: '002-reservation',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).alterTable('checkout_sessions', (t) => {
        t.text('reservation');
      });
    },
  },
  {
    // The UCP platform's order webhook (null: none), beside the agent platform's.
    name: '003-ucp-order-webhook',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).alterTable('agent_checkouts', (t) => {
        t.text('ucp_order_webhook_url');
      });
    },
  },
];
