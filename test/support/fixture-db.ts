import knex, { type Knex } from 'knex';

/** Read-model rows by table name without its schema (`products`, `orders`, `jobs`…), as the queries select them. */
export type FixtureTables = Record<string, Record<string, unknown>[]>;

type Condition = (row: Record<string, unknown>) => boolean;

/** What a test may not silently get wrong: a query this fake cannot read is an error naming it, never an empty answer. */
class UnreadableQuery extends Error {
  constructor(sql: string, what: string) {
    super(`the fixture database cannot answer ${what}: ${sql}`);
  }
}

/** `a (b (c)) d` → `a … d`: what a subquery or a function call holds is not the statement's own table or filter. */
const withoutParentheses = (sql: string): string => {
  let previous: string;
  let current = sql;
  do {
    previous = current;
    current = current.replace(/\([^()]*\)/g, '…');
  } while (current !== previous);
  return current;
};

const compare = (a: unknown, b: unknown): number => {
  const [x, y] = [a instanceof Date ? a.getTime() : a, b instanceof Date ? b.getTime() : b] as [string | number, string | number];
  return x < y ? -1 : x > y ? 1 : 0;
};

function conditionOf(term: string, bindings: readonly unknown[], sql: string): Condition {
  const valueAt = (position: string) => bindings[Number(position) - 1];
  const equality = /^(not )?"(?:\w+"\.")*(\w+)" = \$(\d+)$/.exec(term);
  if (equality) {
    const [, not, column, position] = equality as unknown as [string, string | undefined, string, string];
    const value = valueAt(position);
    return (row) => (row[column] === value) !== Boolean(not);
  }
  const within = /^"(?:\w+"\.")*(\w+)" in …$/.exec(term);
  if (within) {
    // The list itself, which the parentheses-free statement no longer shows: `"column" in ($1, $2, …)`.
    const column = within[1]!;
    const list = new RegExp(`"${column}" in \\(([^()]*)\\)`).exec(sql)?.[1];
    if (!list) throw new UnreadableQuery(sql, `the condition ${term}`);
    const values = list.split(', ').map((position) => valueAt(position.replace('$', '')));
    return (row) => values.includes(row[column]);
  }
  const isNull = /^"(?:\w+"\.")*(\w+)" is (not )?null$/.exec(term);
  if (isNull) {
    const [, column, not] = isNull as unknown as [string, string, string | undefined];
    return (row) => (row[column] === null || row[column] === undefined) !== Boolean(not);
  }
  throw new UnreadableQuery(sql, `the condition ${term}`);
}

/**
 * Answers a SELECT the way the read model would if it held `tables`: the rows of its table matching its column
 * equalities (the tenant and org scope among them), in its order, limit and offset; `count(*)` counts them.
 */
export function answer(
  tables: FixtureTables,
  sql: string,
  bindings: readonly unknown[],
): { command: 'SELECT'; rows: unknown[]; rowCount: number } {
  if (!/^select /i.test(sql)) throw new UnreadableQuery(sql, 'a write (the routes only read the read models)');
  const statement = withoutParentheses(sql);
  const from = / from "[\w-]+"\."(\w+)"/.exec(statement);
  if (!from) throw new UnreadableQuery(sql, 'a query without a schema-qualified table');
  const table = from[1]!;
  const rows = tables[table] ?? [];
  const where = / where (.*?)(?: order by | limit | offset |$)/.exec(statement)?.[1];
  if (where && / or /i.test(where)) throw new UnreadableQuery(sql, 'a disjunction');
  const conditions = where ? where.split(' and ').map((term) => conditionOf(term, bindings, sql)) : [];
  let matching = rows.filter((row) => conditions.every((holds) => holds(row)));

  const orderBy = / order by (.*?)(?: limit | offset |$)/.exec(statement)?.[1];
  if (orderBy) {
    const keys = orderBy.split(', ').map((key) => {
      const parsed = /^"(?:\w+"\.")*(\w+)" (asc|desc)$/.exec(key);
      if (!parsed) throw new UnreadableQuery(sql, `the ordering ${key}`);
      return { column: parsed[1]!, sign: parsed[2] === 'desc' ? -1 : 1 };
    });
    matching = [...matching].sort((a, b) => {
      for (const { column, sign } of keys) {
        const order = compare(a[column], b[column]);
        if (order !== 0) return sign * order;
      }
      return 0;
    });
  }
  const offset = / offset \$(\d+)/.exec(statement);
  const limit = / limit \$(\d+)/.exec(statement);
  const start = offset ? Number(bindings[Number(offset[1]) - 1]) : 0;
  const page = matching.slice(start, limit ? start + Number(bindings[Number(limit[1]) - 1]) : undefined);

  // A column `exists (select 1 from "schema"."table" r where r.column = "schema"."outer".column) as name`: whether a row
  // of that table points at the row's own.
  const existsColumns = [
    ...sql.matchAll(/exists \(select 1 from "[\w-]+"\.(\w+) (\w+) where \2\.(\w+) = "[\w-]+"\."\w+"\.(\w+)\) as (\w+)/g),
  ].map(([, other, , column, outer, name]) => ({ other: other!, column: column!, outer: outer!, name: name! }));
  const withExists = (row: Record<string, unknown>) => {
    for (const { other, column, outer, name } of existsColumns) row[name] = (tables[other] ?? []).some((r) => r[column] === row[outer]);
    return row;
  };
  const count = /^select count\(\*\) as "(\w+)"/.exec(sql);
  // Postgres answers a count as text (a bigint).
  const answered = count ? [{ [count[1]!]: String(matching.length) }] : page.map((row) => withExists(structuredClone(row)));
  return { command: 'SELECT', rows: answered, rowCount: answered.length };
}

/**
 * A knex over no database: its statements are compiled as for Postgres and answered from `tables` (which a test may
 * change as it goes, as a projection would), so the routes' own queries run unchanged, tenant scope included.
 */
export function fixtureDb(tables: FixtureTables): Knex {
  const db = knex({ client: 'pg' });
  Object.assign(db.client, {
    acquireConnection: async () => ({}),
    releaseConnection: async () => undefined,
    _query: async (_connection: unknown, query: { sql: string; bindings?: unknown[]; response?: unknown }) => {
      query.response = answer(tables, query.sql, query.bindings ?? []);
      return query;
    },
  });
  return db;
}
