import type { Knex } from 'knex';
import { liveSchema } from '../../ledger/projection.ts';
import type { Scope } from '../catalog/catalog-queries.ts';
import { feedProjection } from './feed-projection.ts';

const schema = liveSchema(feedProjection);

export type CatalogFeedRow = {
  id: string;
  tenant_id: string;
  org_id: string;
  seller_name: string | null;
  product_url_template: string | null;
  configured_at: Date | null;
  content_hash: string | null;
  json_ld_key: string | null;
  jsonl_key: string | null;
  product_count: number | null;
  item_count: number | null;
  published_at: Date | null;
};

/** The tenant and org's feed; undefined while it was neither configured nor published. */
export const findCatalogFeed = (db: Knex, { tenantId, orgId }: Scope): Promise<CatalogFeedRow | undefined> =>
  db(`${schema}.catalog_feeds`).where({ tenant_id: tenantId, org_id: orgId }).first();

/** Up to `limit` of the feed's files that stopped being served before `before`: the ones to prune. */
export const replacedFiles = async (db: Knex, feedId: string, before: Date, limit = 200): Promise<string[]> =>
  (
    (await db(`${schema}.feed_files`)
      .where({ feed_id: feedId })
      .where('replaced_at', '<', before)
      .orderBy('replaced_at')
      .limit(limit)
      .select('key')) as { key: string }[]
  ).map((row) => row.key);
