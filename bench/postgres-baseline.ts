// What users would pick instead of the ledger: a bare fastify route that inserts the product row the catalog
// projection writes (projections/catalog/catalog-migrations.ts, catalog-projection.ts) and reads it back.
import { randomBytes, randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';
import { ensureDatabase, withDatabase } from '../ledger/database.ts';

export type PostgresBaseline = { url: string; database: string; close: () => Promise<void> };

/** The catalog's products table as its migrations 001, 003 and 004 leave it. */
export const productsTable = `
  create table products (
    id uuid primary key,
    tenant_id uuid not null,
    org_id uuid not null,
    title text not null,
    description text,
    category text,
    status text not null,
    created_at timestamptz(3) not null,
    updated_at timestamptz(3) not null,
    sku text,
    brand text,
    template_id uuid,
    quality_score integer,
    attributes jsonb not null default '{}'
  );
  create index products_tenant_id_org_id_created_at_index on products (tenant_id, org_id, created_at);
`;

type ProductBody = { title?: unknown; description?: unknown; category?: unknown; sku?: unknown; brand?: unknown };
const text = (value: unknown) => (typeof value === 'string' ? value : null);

/**
 * Listens on a free port of 127.0.0.1 over a throwaway database of its own (dropped by `close`); run in a process of its
 * own by bench/baseline-server.ts. The pool has pg's default size, 10, as the service's knex pools.
 */
export async function startPostgresBaseline(postgresServerUrl: string): Promise<PostgresBaseline> {
  const database = `bench_${randomBytes(5).toString('hex')}`;
  const databaseUrl = withDatabase(postgresServerUrl, database);
  await ensureDatabase(databaseUrl);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  // The forced drop at the end terminates whatever connection is still closing: that is expected, not a crash.
  pool.on('error', () => undefined);
  await pool.query(productsTable);

  const app = Fastify();
  app.post('/products', async (request, reply) => {
    const body = (request.body ?? {}) as ProductBody;
    if (typeof body.title !== 'string' || body.title.length === 0) return reply.code(400).send({ error: 'title is required' });
    const id = randomUUID();
    const now = new Date();
    await pool.query(
      `insert into products (id, tenant_id, org_id, title, description, category, sku, brand, template_id, attributes, status, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) on conflict (id) do nothing`,
      [
        id,
        request.headers['x-tenant-id'],
        request.headers['x-org-id'],
        body.title,
        text(body.description),
        text(body.category),
        text(body.sku),
        text(body.brand),
        null,
        '{}',
        'ACTIVE',
        now,
        now,
      ],
    );
    const { rows } = await pool.query('select * from products where id = $1', [id]);
    return reply.code(201).send(rows[0]);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

  return {
    url,
    database,
    close: async () => {
      await app.close();
      await pool.end();
      await dropDatabase(postgresServerUrl, database);
    },
  };
}

/** Drops a baseline's throwaway database, whatever connection to it is still closing. */
export async function dropDatabase(postgresServerUrl: string, database: string): Promise<void> {
  const admin = new pg.Client({ connectionString: withDatabase(postgresServerUrl, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${database}" with (force)`);
  } finally {
    await admin.end();
  }
}
