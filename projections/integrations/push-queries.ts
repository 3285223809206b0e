import type { Knex } from 'knex';
import { liveSchema } from '../../ledger/projection.ts';
import { pushProjection } from './push-projection.ts';

type Scope = { tenantId: string; orgId: string };

const schema = liveSchema(pushProjection);

export type ItemFailureRow = {
  item_push_id: string;
  product_id: string;
  last_error: string;
  last_http_status: number | null;
  failures: number;
  next_attempt_at: Date | null;
  last_failed_at: Date;
};

export type SyncStatus = {
  connection: { id: string; status: string; status_reason: string | null; initial_total: number; activated_at: Date | null };
  counts: { synced: number; pending: number; retrying: number; dead_lettered: number; initial_pushed: number; initial_failed: number };
  lastPushedAt: Date | null;
  failures: ItemFailureRow[];
  deadLetters: ItemFailureRow[];
};

const failureColumns = ['item_push_id', 'product_id', 'last_error', 'last_http_status', 'failures', 'next_attempt_at', 'last_failed_at'];

/** A connection's push state as its tenant and org see it; undefined for another's (or an unknown) connection. */
export function syncStatus(db: Knex, scope: Scope, connectionId: string, listLimit = 100): Promise<SyncStatus | undefined> {
  // The counts and the lists in one snapshot: read apart, a failure recorded in between showed in the list, not the counts.
  return db.transaction((tx) => readSyncStatus(tx, scope, connectionId, listLimit), { isolationLevel: 'repeatable read', readOnly: true });
}

async function readSyncStatus(
  db: Knex,
  { tenantId, orgId }: Scope,
  connectionId: string,
  listLimit: number,
): Promise<SyncStatus | undefined> {
  const connection = await db(`${schema}.connections`)
    .where({ id: connectionId, tenant_id: tenantId, org_id: orgId })
    .first('id', 'status', 'status_reason', 'initial_total', 'activated_at');
  if (!connection) return undefined;
  const items = () => db(`${schema}.items`).where({ connection_id: connectionId });
  const { rows } = (await db.raw(
    `select
       count(*) filter (where desired_seq <= pushed_seq)::int as synced,
       count(*) filter (where desired_seq > pushed_seq and not dead_lettered and failures = 0)::int as pending,
       count(*) filter (where desired_seq > pushed_seq and not dead_lettered and failures > 0)::int as retrying,
       count(*) filter (where dead_lettered)::int as dead_lettered,
       count(*) filter (where initial_seq is not null and pushed_seq >= initial_seq)::int as initial_pushed,
       count(*) filter (where initial_seq is not null and pushed_seq < initial_seq and dead_lettered)::int as initial_failed,
       max(last_pushed_at) as last_pushed_at
     from ??.items where connection_id = ?`,
    [schema, connectionId],
  )) as { rows: (SyncStatus['counts'] & { last_pushed_at: Date | null })[] };
  const { last_pushed_at: lastPushedAt, ...counts } = rows[0]!;
  const [failures, deadLetters] = await Promise.all([
    items()
      .where({ dead_lettered: false })
      .where('failures', '>', 0)
      .orderBy('last_failed_at', 'desc')
      .limit(listLimit)
      .select(failureColumns) as Promise<ItemFailureRow[]>,
    items().where({ dead_lettered: true }).orderBy('last_failed_at', 'desc').limit(listLimit).select(failureColumns) as Promise<
      ItemFailureRow[]
    >,
  ]);
  return { connection, counts, lastPushedAt, failures, deadLetters };
}

export type DeadLetterRow = ItemFailureRow & { connection_id: string; tenant_id: string; org_id: string; desired_action: string };

/** Every dead-lettered push (all tenants: for the operator's CLI), optionally of one connection or tenant. */
export const deadLetters = (db: Knex, filter: { connectionId?: string; tenantId?: string } = {}): Promise<DeadLetterRow[]> => {
  const query = db(`${schema}.items`).where({ dead_lettered: true });
  if (filter.connectionId) query.where({ connection_id: filter.connectionId });
  if (filter.tenantId) query.where({ tenant_id: filter.tenantId });
  return query.orderBy('last_failed_at').select([...failureColumns, 'connection_id', 'tenant_id', 'org_id', 'desired_action']) as Promise<
    DeadLetterRow[]
  >;
};
