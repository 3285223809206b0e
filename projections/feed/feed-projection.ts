import { catalogFeedAggregate, type CatalogFeedEvent } from '../../commands/ucp/catalog-feed.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { projectionOf, type EventHandlers, type Projection } from '../../ledger/projection.ts';
import { feedMigrations } from './feed-migrations.ts';

const owner = (event: RecordedEvent<CatalogFeedEvent>) => ({
  id: event.data.feedId,
  tenant_id: event.envelope.tenantId,
  org_id: event.envelope.orgId,
});

const handlers: EventHandlers<CatalogFeedEvent> = {
  CatalogFeedConfigured: (event, { table }) =>
    table('catalog_feeds')
      .insert({
        ...owner(event),
        seller_name: event.data.sellerName,
        product_url_template: event.data.productUrlTemplate,
        configured_at: new Date(event.envelope.occurredAt),
      })
      .onConflict('id')
      .merge(['seller_name', 'product_url_template', 'configured_at']),
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
