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
  CatalogFeedPublished: (event, { table }) =>
    table('catalog_feeds')
      .insert({
        ...owner(event),
        content_hash: event.data.contentHash,
        json_ld_key: event.data.jsonLdKey,
        jsonl_key: event.data.jsonlKey,
        product_count: event.data.productCount,
        item_count: event.data.itemCount,
        published_at: new Date(event.envelope.occurredAt),
      })
      .onConflict('id')
      .merge(['content_hash', 'json_ld_key', 'jsonl_key', 'product_count', 'item_count', 'published_at']),
};

/** Each tenant and org's feed settings and the files currently served, as the feed routes and the feed processor read them. */
export const feedProjection: Projection = projectionOf({
  name: 'feed',
  topics: [catalogFeedAggregate.events],
  migrations: feedMigrations,
  handlers,
});
