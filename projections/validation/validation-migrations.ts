import type { ProjectionMigration } from '../../ledger/projection.ts';

export const validationMigrations: ProjectionMigration[] = [
  {
    name: '001-validation-issues',
    up: async (db, schema) => {
      await db.schema.withSchema(schema).createTable('validation_issues', (t) => {
        t.uuid('id').primary();
        t.uuid('tenant_id').notNullable();
        t.uuid('org_id').notNullable();
        t.uuid('product_id').notNullable();
        t.text('issue_type').notNullable();
        t.text('severity').notNullable();
        t.text('message').notNullable();
        t.boolean('resolved').notNullable();
        t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
        t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable();
        t.index(['tenant_id', 'org_id', 'resolved', 'created_at']);
      });
    },
  },
];
