import type { Knex } from 'knex';

/** How many rows the query selects (Postgres answers a count as text: it is a bigint). */
export async function rowCount(query: Knex.QueryBuilder): Promise<number> {
  const row: { n: string } | undefined = await query.count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}
