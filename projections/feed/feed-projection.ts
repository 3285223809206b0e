import { catalogFeedAggregate, type CatalogFeedEvent } from '../../commands/ucp/catalog-feed.ts';
import type { CatalogFeedSettings } from '../../commands/ucp/feed-settings.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { projectionOf, type EventHandlers, type Projection } from '../../ledger/projection.ts';
import { feedMigrations } from './feed-migrations.ts';

const owner = (event: RecordedEvent<CatalogFeedEvent>) => ({
  id: event.data.feedId,
  tenant_id: event.envelope.tenantId,
  org_id: event.envelope.orgId,
});

const settingsColumns = (settings: CatalogFeedSettings) => ({
  seller_name: settings.sellerName,
  product_url_template: settings.productUrlTemplate,
  seller_url: settings.sellerUrl,
  store_country: settings.storeCountry,
  target_countries: JSON.stringify(settings.targetCountries),
  privacy_policy_url: settings.privacyPolicyUrl,
  terms_of_service_url: settings.termsOfServiceUrl,
  return_policy_url: settings.returnPolicyUrl,
  return_window_days: settings.returnWindowDays,
  item_condition: settings.itemCondition,
  shipping_price: settings.shippingPrice,
  shipping_currency: settings.shippingCurrency,
});

const handlers: EventHandlers<CatalogFeedEvent> = {
  CatalogFeedConfigured: (event, { table }) => {
    const settings = settingsColumns(event.data);
    return table('catalog_feeds')
      .insert({ ...owner(event), ...settings, configured_at: new Date(event.envelope.occurredAt) })
      .onConflict('id')
      .merge([...Object.keys(settings), 'configured_at']);
  },
  CatalogFeedRequested: (event, { table }) =>
    table('catalog_feeds')
      .insert({ ...owner(event), requested_at: new Date(event.envelope.occurredAt) })
      .onConflict('id')
      .merge(['requested_at']),
  CatalogFeedPublished: async (event, { table }) => {
    const { feedId, jsonLdKey, jsonlKey } = event.data;
    const at = new Date(event.envelope.occurredAt);
    await table('catalog_feeds')
      .insert({
        ...owner(event),
        content_hash: event.data.contentHash,
        json_ld_key: jsonLdKey,
        jsonl_key: jsonlKey,
        product_count: event.data.productCount,
        item_count: event.data.itemCount,
        published_at: at,
      })
      .onConflict('id')
      .merge(['content_hash', 'json_ld_key', 'jsonl_key', 'product_count', 'item_count', 'published_at']);
    const files = [jsonLdKey, jsonlKey].map((key) => ({
      key,
      feed_id: feedId,
      tenant_id: event.envelope.tenantId,
      org_id: event.envelope.orgId,
      published_at: at,
      replaced_at: null,
    }));
    await table('feed_files').insert(files).onConflict('key').merge(['published_at', 'replaced_at']);
    await table('feed_files')
      .where({ feed_id: feedId })
      .whereNull('replaced_at')
      .whereNotIn('key', [jsonLdKey, jsonlKey])
      .update({ replaced_at: at });
  },
  CatalogFeedFilesPruned: (event, { table }) => table('feed_files').whereIn('key', event.data.keys).delete(),
};

/** Each tenant and org's feed settings and the files currently served, as the feed routes and the feed processor read them. */
export const feedProjection: Projection = projectionOf({
  name: 'feed',
  topics: [catalogFeedAggregate.events],
  migrations: feedMigrations,
  handlers,
});
