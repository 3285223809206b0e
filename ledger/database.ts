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
        if (error.code !== '42P04') throw error; // created concurrently
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
