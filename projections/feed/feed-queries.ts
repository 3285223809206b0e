import type { Knex } from 'knex';
import type { CatalogFeedSettings, ItemCondition } from '../../commands/ucp/feed-settings.ts';
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
  seller_url: string | null;
  store_country: string | null;
  target_countries: string[];
  privacy_policy_url: string | null;
  terms_of_service_url: string | null;
  return_policy_url: string | null;
  return_window_days: number | null;
  item_condition: ItemCondition | null;
  shipping_price: string | null;
  shipping_currency: string | null;
  configured_at: Date | null;
  requested_at: Date | null;
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

/** The settings the feed is built with; null until configured. */
export const feedSettingsOf = (row: CatalogFeedRow | undefined): CatalogFeedSettings | null =>
  row?.seller_name && row.product_url_template
    ? {
        sellerName: row.seller_name,
        productUrlTemplate: row.product_url_template,
        sellerUrl: row.seller_url,
        storeCountry: row.store_country,
        targetCountries: row.target_countries,
        privacyPolicyUrl: row.privacy_policy_url,
        termsOfServiceUrl: row.terms_of_service_url,
        returnPolicyUrl: row.return_policy_url,
        returnWindowDays: row.return_window_days,
        itemCondition: row.item_condition,
        shippingPrice: row.shipping_price,
        shippingCurrency: row.shipping_currency,
      }
    : null;

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
