import pg, { type ClientBase } from 'pg';

/** A row as a batch writes it: column name → value, in the JSON form Postgres reads back into the column's type. */
export type Row = Record<string, unknown>;

export const tableIn = (schema: string, table: string): string => `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`;

/**
 * Inserts every row in one statement: the rows travel as one JSON array and `jsonb_populate_recordset` reads each
 * into the table's own row type, so no column types are spelled twice. `onConflict` follows (`on conflict …`).
 * Every row must carry the same columns.
 */
export async function insertRows(sql: ClientBase, schema: string, table: string, rows: Row[], onConflict: string): Promise<void> {
  const [first] = rows;
  if (!first) return;
  const target = tableIn(schema, table);
  const columns = Object.keys(first).map((column) => pg.escapeIdentifier(column));
  await sql.query(
    `insert into ${target} (${columns.join(', ')}) select ${columns.join(', ')} from jsonb_populate_recordset(null::${target}, $1::jsonb) ${onConflict}`,
    [JSON.stringify(rows)],
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
