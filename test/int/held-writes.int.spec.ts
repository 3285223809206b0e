import { randomUUID } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, ensureDatabase, withDatabase, withPooledConnection } from '../../ledger/database.ts';
import { holdingWrites, write } from '../../ledger/held-writes.ts';
import { dollarQuoted, insertRows } from '../../projections/record-set.ts';

/**
 * Writes nobody reads back wait on a projection's connection to travel with its next statement (its commit, at the
 * latest): fewer round trips per batch, and never a read that misses a write made before it.
 */
describe('held writes on a projection connection', () => {
  const schema = `held_${randomUUID().slice(0, 8)}`;
  let pool: pg.Pool;
  let db: Knex;

  /** The statements the connection sends to Postgres (each `query` call one round trip) while `work` runs. */
  const counted = async (work: (sql: pg.PoolClient, sent: string[]) => Promise<void>) =>
    withPooledConnection(pool, async (sql) => {
      const sent: string[] = [];
      const own = Object.getOwnPropertyDescriptor(sql, 'query');
      const query = sql.query.bind(sql) as (...args: unknown[]) => unknown;
      Object.defineProperty(sql, 'query', {
        configurable: true,
        writable: true,
        value: (...args: unknown[]) => {
          sent.push(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string }).text));
          return query(...args);
        },
      });
      try {
        await work(sql, sent);
      } finally {
        if (own) Object.defineProperty(sql, 'query', own);
        else delete (sql as unknown as { query?: unknown }).query;
      }
    });

  const names = async () => (await db(`${schema}.seen`).orderBy('name').pluck('name')) as string[];

  beforeAll(async () => {
    const url = withDatabase(inject('stack').postgresServerUrl, 'cl_projection_tests');
    await ensureDatabase(url);
    pool = createPool(url);
    db = knexFactory({ client: 'pg', connection: url });
    await db.raw(`create schema ${schema}; create table ${schema}.seen (name text primary key, note text)`);
  });

  afterAll(async () => {
    await db.raw(`drop schema if exists ${schema} cascade`);
    await db.destroy();
    await pool.end();
  });

  it('sends the held writes with the statement that ends the transaction, in one round trip', async () => {
    await counted(async (sql, sent) => {
      await sql.query('begin');
      sent.splice(0);
      const holding = holdingWrites(sql);
      await insertRows(holding.sql, schema, 'seen', [{ name: 'a' }, { name: 'b' }], 'on conflict (name) do nothing');
      await write(holding.sql, `insert into ${schema}.seen (name) values ('c')`);
      expect(sent).toEqual([]);
      await sql.query([...holding.take(), 'commit'].join(';\n'));
      expect(sent).toHaveLength(1);
    });
    expect(await names()).toEqual(['a', 'b', 'c']);
  });

  it('sends what is held before any other query, so a read sees every write before it (knex too)', async () => {
    await counted(async (sql, sent) => {
      await sql.query('begin');
      sent.splice(0);
      const holding = holdingWrites(sql);
      await write(holding.sql, `insert into ${schema}.seen (name) values ('d')`);
      const read = await holding.sql.query<{ n: string }>(`select count(*) as n from ${schema}.seen where name = $1`, ['d']);
      expect(read.rows[0]?.n).toBe('1');
      await write(holding.sql, `insert into ${schema}.seen (name) values ('e')`);
      const throughKnex = await db(`${schema}.seen`).connection(holding.sql).where({ name: 'e' }).pluck('name');
      expect(throughKnex).toEqual(['e']);
      expect(sent).toHaveLength(4);
      expect(holding.take()).toEqual([]);
      await sql.query('rollback');
    });
    expect(await names()).toEqual(['a', 'b', 'c']);
  });

  it('lays a failing held write at the door of the statement it travels with, and nothing of the transaction stays', async () => {
    const failed = withPooledConnection(pool, async (sql) => {
      await sql.query('begin');
      const holding = holdingWrites(sql);
      await write(holding.sql, `insert into ${schema}.seen (name) values ('f')`);
      await write(holding.sql, `insert into ${schema}.seen (name) values ('a')`);
      await holding.flush();
    });
    await expect(failed).rejects.toThrow(/duplicate key/);
    expect(await names()).toEqual(['a', 'b', 'c']);
  });

  it('sends a write at once on a connection that holds none', async () => {
    await counted(async (sql, sent) => {
      await write(sql, `insert into ${schema}.seen (name) values ('g')`);
      expect(sent).toHaveLength(1);
    });
    expect(await names()).toContain('g');
  });

  it('quotes any text whole, whatever it holds', async () => {
    const texts = ["it's", 'back\\slash', '$rows$ inside', '$$', 'ünïcödé ✓', '{"a": "b"}'];
    for (const text of texts) {
      const { rows } = await pool.query<{ text: string }>(`select ${dollarQuoted(text)}::text as text`);
      expect(rows[0]?.text).toBe(text);
    }
    await withPooledConnection(pool, async (sql) => {
      await sql.query('begin');
      const holding = holdingWrites(sql);
      await insertRows(
        holding.sql,
        schema,
        'seen',
        texts.map((note, i) => ({ name: `q${i}`, note })),
        'on conflict (name) do nothing',
      );
      await sql.query([...holding.take(), 'commit'].join(';\n'));
    });
    const notes = await db(`${schema}.seen`).where('name', 'like', 'q%').orderBy('name').pluck('note');
    expect(notes).toEqual(texts);
  });
});
