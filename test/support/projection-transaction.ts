import type { Knex } from 'knex';
import type pg from 'pg';
import { withPooledConnection } from '../../ledger/database.ts';
import { projectionContext, type ProjectionContext } from '../../ledger/projection.ts';

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
