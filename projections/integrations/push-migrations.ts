import type { ProjectionMigration } from '../../ledger/projection.ts';

export const pushMigrations: ProjectionMigration[] = [
  {
    name: '001-push',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).createTable('connections', (t) => {
        t.uuid('id').primary();
        t.uuid('tenant_id').notNullable();
        t.uuid('org_id').notNullable();
        t.text('unified_connection_id').notNullable();
        t.text('status').notNullable();
        t.text('status_reason');
        t.integer('initial_total').notNullable().defaultTo(0);
        t.timestamp('activated_at', { useTz: true, precision: 3 });
        t.index(['tenant_id', 'org_id', 'status']);
      });
      await db.schema.withSchema(schema).createTable('webhooks', (t) => {
        t.uuid('connection_id').notNullable();
        t.text('event').notNullable();
        t.text('object_type').notNullable();
        t.text('subscription_id').notNullable();
        t.primary(['connection_id', 'object_type', 'event']);
      });
      // Every product the push knows of, with where its latest event is in the log (what a push must at least show).
      await db.schema.withSchema(schema).createTable('products', (t) => {
        t.uuid('id').primary();
        t.uuid('tenant_id').notNullable();
        t.uuid('org_id').notNullable();
        t.boolean('deleted').notNullable();
        t.text('topic').notNullable();
        t.integer('partition').notNullable();
        t.bigInteger('offset').notNullable();
        t.index(['tenant_id', 'org_id']);
      });
      // One row per (connection, product): what is wanted on the platform, what was pushed, and when to try next.
      await db.schema.withSchema(schema).createTable('items', (t) => {
        t.uuid('item_push_id').primary();
        t.uuid('connection_id').notNullable();
        t.uuid('product_id').notNullable();
        t.uuid('tenant_id').notNullable();
        t.uuid('org_id').notNullable();
        t.text('desired_action').notNullable();
        /** Requests so far (every change or explicit request adds one); a push answers the count it saw. */
        t.bigInteger('desired_seq').notNullable();
        t.bigInteger('pushed_seq').notNullable().defaultTo(0);
        t.text('product_topic').notNullable();
        t.integer('product_partition').notNullable();
        t.bigInteger('product_offset').notNullable();
        /** Set when the connection's initial sync asked for this item: the request it must answer to count as synced. */
        t.bigInteger('initial_seq');
        t.text('remote_id');
        t.integer('failures').notNullable().defaultTo(0);
        t.boolean('dead_lettered').notNullable().defaultTo(false);
        t.timestamp('next_attempt_at', { useTz: true, precision: 3 });
        t.text('last_error');
        t.integer('last_http_status');
        t.timestamp('last_pushed_at', { useTz: true, precision: 3 });
        t.timestamp('last_failed_at', { useTz: true, precision: 3 });
        // Written by the push worker, not by events (a rebuild starts them afresh; see docs/decisions.md "Product push").
        t.timestamp('leased_until', { useTz: true, precision: 3 });
        t.boolean('create_started').notNullable().defaultTo(false);
        t.index(['connection_id', 'product_id']);
        t.index(['product_id']);
      });
      // The claim reads each connection's due items in order: a claim costs its limit, not the backlog.
      await db.raw(
        `create index items_due_per_connection on ??.items (connection_id, next_attempt_at nulls first) where desired_seq > pushed_seq and not dead_lettered`,
        [schema],
      );
    },
  },
  {
    name: '002-remote-variants',
    up: async (db, schema) => {
      // The item's variants on the platform (ours to its itemvariant ids), as the last successful push recorded them.
      await db.schema.withSchema(schema).alterTable('items', (t) => {
        t.jsonb('remote_variants').notNullable().defaultTo('[]');
      });
    },
  },
];
