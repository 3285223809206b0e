import type { Knex } from 'knex';
import type { BulkJobType } from '../../commands/bulk/bulk-job.ts';
import type { Actor } from '../../ledger/message.ts';
import { liveSchema } from '../../ledger/projection.ts';
import type { Scope } from '../catalog/catalog-queries.ts';
import { bulkProjection } from './bulk-projection.ts';

const schema = liveSchema(bulkProjection);

export type BulkJobStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';

export type BulkJobRow = {
  id: string;
  tenant_id: string;
  org_id: string;
  job_type: BulkJobType;
  status: BulkJobStatus;
  total_items: number | null;
  processed_items: number | null;
  failed_items: number | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
};

export type ItemErrorRow = { item_index: number; code: string; message: string; product_id: string | null };

/** What the worker needs besides: the item count (total_items shows only once started) and who submitted the job. */
export type WorkerJobRow = BulkJobRow & { item_count: number; actor: Actor };

export type ChunkRow = { chunk: number; first_index: number; item_count: number; items: string };

const columns = [
  'id',
  'tenant_id',
  'org_id',
  'job_type',
  'status',
  'total_items',
  'processed_items',
  'failed_items',
  'created_by',
  'created_at',
  'updated_at',
];

/** The tenant's most recent jobs of one type, newest first. */
export const listJobs = (db: Knex, { tenantId, orgId }: Scope, jobType: BulkJobType, limit = 100): Promise<BulkJobRow[]> =>
  db(`${schema}.jobs`)
    .where({ tenant_id: tenantId, org_id: orgId, job_type: jobType })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }])
    .limit(limit)
    .select(columns);

export const findJob = (db: Knex, { tenantId, orgId }: Scope, id: string): Promise<BulkJobRow | undefined> =>
  db(`${schema}.jobs`).where({ id, tenant_id: tenantId, org_id: orgId }).first(columns);

/** The first `limit` item errors of a job, by item. */
export const itemErrors = (db: Knex, jobId: string, limit: number): Promise<ItemErrorRow[]> =>
  db(`${schema}.item_errors`)
    .where({ job_id: jobId })
    .orderBy('item_index')
    .limit(limit)
    .select('item_index', 'code', 'message', 'product_id');

/**
 * What the bulk worker has to do: unfinished jobs, each tenant's oldest first, then each tenant's second, and so on,
 * so that one tenant's backlog never hides another's job beyond `limit`.
 */
export const unfinishedJobs = (db: Knex, limit = 10): Promise<WorkerJobRow[]> =>
  db
    .from(
      db(`${schema}.jobs`)
        .whereIn('status', ['PENDING', 'PROCESSING'])
        .select([...columns, 'item_count', 'actor', db.raw('row_number() over (partition by tenant_id order by created_at, id) as turn')])
        .as('unfinished'),
    )
    .orderBy([{ column: 'turn' }, { column: 'created_at' }, { column: 'id' }])
    .limit(limit)
    .select([...columns, 'item_count', 'actor']);

/** The chunk holding item `index` of a job, if the read model has it. */
export const chunkHolding = (db: Knex, jobId: string, index: number): Promise<ChunkRow | undefined> =>
  db(`${schema}.chunks`)
    .where({ job_id: jobId })
    .andWhere('first_index', '<=', index)
    .orderBy('first_index', 'desc')
    .first('chunk', 'first_index', 'item_count', 'items');
