import type { Knex } from 'knex';
import { liveSchema } from '../../ledger/projection.ts';
import { rowCount } from '../row-count.ts';
import type { Scope } from '../catalog/catalog-queries.ts';
import { validationProjection } from './validation-projection.ts';

const schema = liveSchema(validationProjection);

export type IssueRow = {
  id: string;
  org_id: string;
  tenant_id: string;
  product_id: string | null;
  bulk_job_id: string | null;
  item_index: number | null;
  issue_type: string;
  severity: string;
  message: string;
  resolved: boolean;
  created_at: Date;
  updated_at: Date;
};

export const openIssues = (db: Knex, { tenantId, orgId }: Scope, limit = 1000): Promise<IssueRow[]> =>
  db(`${schema}.validation_issues`)
    .where({ tenant_id: tenantId, org_id: orgId, resolved: false })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }])
    .limit(limit);

export const openIssueCount = (db: Knex, { tenantId, orgId }: Scope): Promise<number> =>
  rowCount(db(`${schema}.validation_issues`).where({ tenant_id: tenantId, org_id: orgId, resolved: false }));

/**
 * Products an open ERROR issue of their own holds back from the catalog export and the feed, read once as a set (a
 * tenant's open WARNINGs may be as many as its products, so a lookup per product would scan them again and again). An
 * issue of a bulk job's item (a bulk update of the product that failed) does not hold it back: the product is as it
 * was before that item.
 */
export async function blockedProducts(db: Knex, { tenantId, orgId }: Scope): Promise<Set<string>> {
  const rows = (await db(`${schema}.validation_issues`)
    .where({ tenant_id: tenantId, org_id: orgId, severity: 'ERROR', resolved: false, bulk_job_id: null })
    .whereNotNull('product_id')
    .distinct('product_id')) as { product_id: string }[];
  return new Set(rows.map((row) => row.product_id));
}
