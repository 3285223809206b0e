import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { reasonOf, redactUrl, StartupError } from './startup-error.ts';

// Postgres bigint (offsets, counts) arrives as string; keep it that way for offsets, parse counts where used.
export function createKnex(databaseUrl: string, pool = { min: 0, max: 10 }): Knex {
  // While Postgres is down a query fails after 3 s (503), rather than waiting a minute for a connection.
  return knexFactory({
    client: 'pg',
    connection: { connectionString: databaseUrl, connectionTimeoutMillis: 2_000 },
    pool,
    acquireConnectionTimeout: 3_000,
  });
}

/**
 * A pool of plain `pg` connections, for what holds a connection across several statements of its own making (the
 * projection runner's transactions, a replay's session lock); the same timeouts as `createKnex`.
 */
export function createPool(databaseUrl: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, connectionTimeoutMillis: 2_000, max });
  // An idle connection lost while Postgres is away is dropped by the pool; the next query fails and is retried.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * `work` on one connection of the pool, which sends its own `begin` and `commit` (with other statements, to save round
 * trips). Should it fail, an open transaction is rolled back; a connection that cannot roll back, or is left inside a
 * transaction, is destroyed rather than returned to the pool.
 */
export async function withPooledConnection<T>(pool: pg.Pool, work: (sql: pg.PoolClient) => Promise<T>): Promise<T> {
  const sql = await pool.connect();
  // A connection lost between two statements is reported as an event: unheard, it would end the process. The next
  // statement fails as well, which is how `work` learns of it, and the connection is not reused.
  let broken: Error | undefined;
  const onLost = (error: Error) => (broken ??= error);
  sql.on('error', onLost);
  try {
    return await work(sql);
  } catch (error) {
    if (!broken && sql.getTransactionStatus() !== 'I')
      await sql.query('rollback').catch((rollbackError: Error) => (broken ??= rollbackError));
    throw error;
  } finally {
    if (!broken && sql.getTransactionStatus() !== 'I') broken = new Error('left inside a transaction');
    sql.off('error', onLost);
    sql.release(broken);
  }
}

/**
 * Creates the database named in the URL when it does not exist yet (Postgres has no CREATE DATABASE IF NOT EXISTS).
 * A server that cannot be reached (or refuses the login) is a StartupError naming it: "cannot reach Postgres at …".
 */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/^[a-zA-Z0-9_]+$/.test(name)) throw new StartupError(`unsupported database name "${name}" in DATABASE_URL`);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined); // a connection lost later fails the query in flight, which is enough
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new StartupError(`cannot reach Postgres at ${redactUrl(databaseUrl)} (DATABASE_URL): ${reasonOf(error)}`, { cause: error });
  }
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount === 0) {
      await client.query(`create database "${name}"`).catch((error: { code?: string }) => {
        // Created concurrently: 42P04 once the other has committed, 23505 (pg_database's unique name) while it commits.
        if (error.code !== '42P04' && error.code !== '23505') throw error;
      });
    }
  } finally {
    await client.end();
  }
}

/** The same server and credentials, another database: `postgres://u@h:5432/any` + `x` → `postgres://u@h:5432/x`. */
export function withDatabase(serverOrDatabaseUrl: string, database: string): string {
  const url = new URL(serverOrDatabaseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}
