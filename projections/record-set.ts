import { randomBytes } from 'node:crypto';
import pg, { type ClientBase } from 'pg';
import { write } from '../ledger/held-writes.ts';

/** A row as a batch writes it: column name → value, in the JSON form Postgres reads back into the column's type. */
export type Row = Record<string, unknown>;

export const tableIn = (schema: string, table: string): string => `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`;

/**
 * Text as a Postgres string constant in dollar quotes, under a tag the text does not hold: nothing inside to escape
 * (pg's `escapeLiteral` builds its copy a character at a time, slow on a bulk batch's megabytes of rows).
 */
export function dollarQuoted(text: string): string {
  let tag = '$rows$';
  while (text.includes(tag)) tag = `$rows_${randomBytes(6).toString('hex')}$`;
  return `${tag}${text}${tag}`;
}

/**
 * Inserts every row in one statement: the rows travel as one JSON array and `jsonb_populate_recordset` reads each
 * into the table's own row type, so no column types are spelled twice. `onConflict` follows (`on conflict …`).
 * Every row must carry the same columns. A `write`: the array is a literal, so that a projection runner can send the
 * statement with the next one.
 */
export async function insertRows(sql: ClientBase, schema: string, table: string, rows: Row[], onConflict: string): Promise<void> {
  const [first] = rows;
  if (!first) return;
  const target = tableIn(schema, table);
  const columns = Object.keys(first).map((column) => pg.escapeIdentifier(column));
  await write(
    sql,
    `insert into ${target} (${columns.join(', ')}) select ${columns.join(', ')} ` +
      `from jsonb_populate_recordset(null::${target}, ${dollarQuoted(JSON.stringify(rows))}::jsonb) ${onConflict}`,
  );
}

/** The upsert clause that makes each row's columns, but its id, those of the row given. */
export const replacingAllBut = (rows: Row[], ...kept: string[]): string => {
  const [first] = rows;
  const columns = Object.keys(first ?? {}).filter((column) => !kept.includes(column));
  return `on conflict (id) do update set ${columns.map((c) => `${pg.escapeIdentifier(c)} = excluded.${pg.escapeIdentifier(c)}`).join(', ')}`;
};

/** The first row of each id, in order: what a series of `insert … on conflict (id) do nothing` would keep. */
export function firstOfEachId<R extends { id: string }>(rows: R[]): R[] {
  const kept = new Map<string, R>();
  for (const row of rows) if (!kept.has(row.id)) kept.set(row.id, row);
  return [...kept.values()];
}
