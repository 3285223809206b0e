import type { ClientBase } from 'pg';

/** The statements held back on each connection that holds writes (keyed by the connection handed to the writers). */
const heldOn = new WeakMap<ClientBase, string[]>();

/**
 * A write whose answer nobody reads. On a connection that holds writes (`holdingWrites`) it waits to travel with the
 * next statement sent there, at the latest with the transaction's commit, saving a round trip each; elsewhere it is
 * sent at once. It must be a whole statement of literals: it may share a simple query with others.
 */
export async function write(sql: ClientBase, statement: string): Promise<void> {
  const held = heldOn.get(sql);
  if (held) held.push(statement);
  else await sql.query(statement);
}

/**
 * `sql` for the writers of a transaction: `write`s on it are held, and any other query on it first sends what is held
 * (so a read sees every write before it, in order). `take` hands the held statements to the transaction's owner, to be
 * sent ahead of its own last statement; `flush` sends them now.
 */
export type HoldingConnection = { sql: ClientBase; take: () => string[]; flush: () => Promise<void> };

export function holdingWrites(connection: ClientBase): HoldingConnection {
  const held: string[] = [];
  const take = () => held.splice(0);
  const flush = async () => {
    const statements = take();
    if (statements.length > 0) await connection.query(statements.join(';\n'));
  };
  // Whatever asks: the projections' own statements, and knex's (which passes a callback).
  const query = (...args: unknown[]): unknown => {
    const send = (): unknown => Reflect.apply(connection.query, connection, args);
    if (held.length === 0) return send();
    const callback = args.at(-1);
    if (typeof callback === 'function') {
      flush().then(send, (error: unknown) => (callback as (e: unknown) => void)(error));
      return undefined;
    }
    return flush().then(send);
  };
  const sql = new Proxy(connection, {
    get: (target, property) => (property === 'query' ? query : Reflect.get(target, property, target)),
  });
  heldOn.set(sql, held);
  return { sql, take, flush };
}
