import type { Knex } from 'knex';

type Scope = { tenantId: string; orgId: string };
type ScopedRow = { id: string; tenant_id: string; org_id: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A read of one row by id whose calls in one turn of the event loop go to Postgres as one statement: `load` reads the
 * rows of every id asked, whoever asked, and each caller is given its row only where the row is of the caller's
 * tenant and org. Why: one projection notice resolves every write its transaction applied, and their read-backs
 * follow in the same turn. An id that is no UUID is read alone (it fails, or finds nothing, on its own).
 */
export function batchedLookup<R extends ScopedRow>(
  load: (db: Knex, ids: string[]) => Promise<R[]>,
): (db: Knex, scope: Scope, id: string) => Promise<R | undefined> {
  const pending = new WeakMap<Knex, { ids: Set<string>; rows: Promise<R[]> }>();
  const batchOn = (db: Knex) => {
    const open = pending.get(db);
    if (open) return open;
    const ids = new Set<string>();
    const rows = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      pending.delete(db);
      return load(db, [...ids]);
    });
    const batch = { ids, rows };
    pending.set(db, batch);
    return batch;
  };
  return async (db, { tenantId, orgId }, id) => {
    const key = id.toLowerCase();
    let rows: R[];
    if (UUID.test(id)) {
      const batch = batchOn(db);
      batch.ids.add(key);
      rows = await batch.rows;
    } else rows = await load(db, [id]);
    const [tenant, org] = [tenantId.toLowerCase(), orgId.toLowerCase()];
    return rows.find((row) => row.id.toLowerCase() === key && row.tenant_id.toLowerCase() === tenant && row.org_id.toLowerCase() === org);
  };
}
