import pg from 'pg';
import { withPooledConnection } from './database.ts';

/** A table with fewer rows than this is cheap to scan whatever plan it gets. */
export const FIRST_STATISTICS_ROWS = 500;
/** How often a runner with batches to apply asks which of its tables still have no statistics. */
export const FIRST_STATISTICS_EVERY_MS = 5_000;

/**
 * Gives a projection's tables their first statistics: a table never analyzed (by autovacuum or anyone) is analyzed
 * once it holds FIRST_STATISTICS_ROWS rows. Later statistics are left to autovacuum.
 *
 * Why: without statistics Postgres cannot tell a lookup by primary key and tenant from a scan of the tenant's index,
 * and it chose the tenant's index for every order read back (rm_oms.orders, one tenant of 1 700 orders: 1 699 rows
 * filtered, 0.9 ms, growing with the tenant). Autovacuum gives a new table statistics within a minute, but a freshly
 * rebuilt schema or a server where autovacuum is off (this project's CI machine) leaves it without them for good.
 */
export class FirstStatistics {
  private nextCheck = 0;
  private running?: Promise<void>;

  private readonly pool: pg.Pool;
  private readonly schemas: readonly string[];
  private readonly onError: (error: unknown) => void;
  private readonly now: () => number;

  constructor(pool: pg.Pool, schemas: readonly string[], onError: (error: unknown) => void, now: () => number = Date.now) {
    this.pool = pool;
    this.schemas = schemas;
    this.onError = onError;
    this.now = now;
  }

  /** Starts a check if one is due and none is running; never waits for it, never throws. */
  poke(): void {
    if (this.running || this.now() < this.nextCheck) return;
    this.nextCheck = this.now() + FIRST_STATISTICS_EVERY_MS;
    this.running = this.check()
      .then(() => undefined, this.onError)
      .finally(() => (this.running = undefined));
  }

  /** Analyzes the schemas' tables that have rows enough and no statistics; answers their names (schema.table). */
  async check(): Promise<string[]> {
    return withPooledConnection(this.pool, async (sql) => {
      const { rows } = await sql.query<{ schemaname: string; relname: string }>(
        `select schemaname, relname from pg_stat_user_tables
          where schemaname = any($1) and last_analyze is null and last_autoanalyze is null and n_live_tup >= $2`,
        [this.schemas, FIRST_STATISTICS_ROWS],
      );
      const tables = rows.map(({ schemaname, relname }) => `${pg.escapeIdentifier(schemaname)}.${pg.escapeIdentifier(relname)}`);
      // ANALYZE takes a lock that lets every read and write of the table go on.
      for (const table of tables) await sql.query(`analyze ${table}`);
      return rows.map(({ schemaname, relname }) => `${schemaname}.${relname}`);
    });
  }

  /** Waits for a running check (a runner's stop). */
  async settled(): Promise<void> {
    await this.running;
  }
}
