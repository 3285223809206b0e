import { randomUUID } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import type pg from 'pg';
import { inject } from 'vitest';
import { createPool, ensureDatabase, withDatabase, withPooledConnection } from '../../ledger/database.ts';
import { prepareProjectionSchema, projectionContext, type Projection, type ProjectionContext } from '../../ledger/projection.ts';

/** `work` with a projection's context on `schema`, inside one transaction on a connection of `pool`: as the runner gives it. */
export const inProjectionTransaction = <T>(
  { db, pool }: { db: Knex; pool: pg.Pool },
  schema: string,
  work: (context: ProjectionContext) => Promise<T>,
): Promise<T> =>
  withPooledConnection(pool, async (sql) => {
    await sql.query('begin');
    const result = await work(projectionContext(db, sql, schema));
    await sql.query('commit');
    return result;
  });

/** The projection tests' shared database: a knex and a pool on it, as the runtime has them, and schemas made on it. */
export type ProjectionTestDatabase = {
  db: Knex;
  pool: pg.Pool;
  /** A fresh schema `<prefix>_<projection>_<random>` prepared for `projection`, dropped by `close`. */
  freshSchema: (prefix: string, projection: Projection) => Promise<string>;
  close: () => Promise<void>;
};

export async function openProjectionTestDatabase(): Promise<ProjectionTestDatabase> {
  const url = withDatabase(inject('stack').postgresServerUrl, 'cl_projection_tests');
  await ensureDatabase(url);
  const db = knexFactory({ client: 'pg', connection: url });
  const pool = createPool(url);
  const schemas: string[] = [];
  return {
    db,
    pool,
    freshSchema: async (prefix, projection) => {
      const schema = `${prefix}_${projection.name}_${randomUUID().slice(0, 8)}`;
      schemas.push(schema);
      await prepareProjectionSchema(db, projection, schema);
      return schema;
    },
    close: async () => {
      for (const schema of schemas) await db.raw('drop schema if exists ?? cascade', [schema]);
      await Promise.all([db.destroy(), pool.end()]);
    },
  };
}
