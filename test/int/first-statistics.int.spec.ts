import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, ensureDatabase, withDatabase } from '../../ledger/database.ts';
import { FIRST_STATISTICS_EVERY_MS, FIRST_STATISTICS_ROWS, FirstStatistics } from '../../ledger/first-statistics.ts';

/** A projection's tables get their first statistics from the runner once they hold enough rows, whatever autovacuum does. */
describe('first statistics of a projection schema', () => {
  const schema = `stats_${randomUUID().slice(0, 8)}`;
  const other = `stats_other_${randomUUID().slice(0, 8)}`;
  const tenant = randomUUID();
  const org = randomUUID();
  let url: string;
  let pool: pg.Pool;

  /** A checker on a clock of the test's own: `poked` starts a check if one is due and waits for it, `later` moves the clock an interval on. */
  const clocked = (on: pg.Pool, schemas: string[]) => {
    let now = 0;
    const errors: unknown[] = [];
    const statistics = new FirstStatistics(
      on,
      schemas,
      (error) => errors.push(error),
      () => now,
    );
    const poked = async () => {
      statistics.poke();
      await statistics.settled();
    };
    return { errors, poked, later: () => (now += FIRST_STATISTICS_EVERY_MS) };
  };

  const analyzed = async (table: string): Promise<boolean> => {
    const { rows } = await pool.query<{ done: boolean }>(
      `select last_analyze is not null or last_autoanalyze is not null as done from pg_stat_user_tables where relid = $1::regclass`,
      [table],
    );
    return rows[0]?.done ?? false;
  };
  /** The statistics views count a backend's rows once it reports them (at most a second after its commit). */
  const counted = async (table: string, rows: number) => {
    for (let tries = 0; tries < 100; tries++) {
      const { rows: found } = await pool.query<{ n: string }>(
        `select n_live_tup as n from pg_stat_user_tables where relid = $1::regclass`,
        [table],
      );
      if (Number(found[0]?.n ?? 0) >= rows) return;
      await pool.query(`select pg_stat_force_next_flush(), pg_sleep(0.05)`);
    }
    throw new Error(`${table} never counted ${rows} rows`);
  };
  const fill = async (table: string, count: number) => {
    await pool.query(
      `insert into ${table} (id, tenant_id, org_id, created_at)
       select gen_random_uuid(), $1, $2, now() - make_interval(secs => g) from generate_series(1, $3) g`,
      [tenant, org, count],
    );
    await pool.query(`select pg_stat_force_next_flush()`);
    await counted(table, count);
  };
  const lookupPlan = async (table: string) => {
    const { rows } = await pool.query<{ 'QUERY PLAN': string }>(
      `explain select * from ${table} where id = '${randomUUID()}' and tenant_id = '${tenant}' and org_id = '${org}'`,
    );
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  };

  beforeAll(async () => {
    url = withDatabase(inject('stack').postgresServerUrl, 'cl_projection_tests');
    await ensureDatabase(url);
    pool = createPool(url);
    for (const s of [schema, other]) {
      await pool.query(`create schema ${s}`);
      for (const table of ['big', 'small']) {
        await pool.query(
          `create table ${s}.${table} (id uuid primary key, tenant_id uuid not null, org_id uuid not null, created_at timestamptz not null) with (autovacuum_enabled = false)`,
        );
        await pool.query(`create index on ${s}.${table} (tenant_id, org_id, created_at)`);
      }
    }
  });

  afterAll(async () => {
    for (const s of [schema, other]) await pool.query(`drop schema if exists ${s} cascade`);
    await pool.end();
  });

  it('analyzes a table of its schemas once it holds enough rows, and only then, once', async () => {
    const statistics = new FirstStatistics(pool, [schema], (error) => {
      throw error;
    });
    await fill(`${schema}.small`, FIRST_STATISTICS_ROWS - 1);
    expect(await statistics.check()).toEqual([]);

    await fill(`${schema}.big`, 2_000);
    await fill(`${other}.big`, 2_000);
    // Without statistics a lookup by id, tenant and org (as the read models' are) takes the tenant's index.
    expect(await lookupPlan(`${schema}.big`)).not.toMatch(/big_pkey/);
    expect(await statistics.check()).toEqual([`${schema}.big`]);
    expect([await analyzed(`${schema}.big`), await analyzed(`${schema}.small`), await analyzed(`${other}.big`)]).toEqual([
      true,
      false,
      false,
    ]);
    // With them it takes the primary key, not a scan of the tenant's 2 000 rows.
    expect(await lookupPlan(`${schema}.big`)).toMatch(/big_pkey/);
    expect(await statistics.check()).toEqual([]);
  });

  it('checks at most once in its interval, without waiting for the check', async () => {
    const { errors, poked, later } = clocked(pool, [other]);
    await poked();
    expect(await analyzed(`${other}.big`)).toBe(true);

    await fill(`${other}.small`, FIRST_STATISTICS_ROWS);
    await poked();
    expect(await analyzed(`${other}.small`)).toBe(false);
    later();
    await poked();
    expect(await analyzed(`${other}.small`)).toBe(true);
    expect(errors).toEqual([]);
  });

  it('reports a failed check and tries again after its interval', async () => {
    const closed = createPool(url);
    await closed.end();
    const { errors, poked, later } = clocked(closed, [schema]);
    await poked();
    expect(errors).toHaveLength(1);
    await poked();
    expect(errors).toHaveLength(1);
    later();
    await poked();
    expect(errors).toHaveLength(2);
  });
});
