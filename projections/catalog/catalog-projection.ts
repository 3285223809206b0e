import {
  applyAttributeChanges,
  productAggregate,
  type AttributeValues,
  type ProductEvent,
  type ProductField,
} from '../../commands/catalog/product.ts';
import { brandAggregate, type BrandEvent } from '../../commands/catalog/brand.ts';
import { taxonomyAggregate, type TaxonomyEvent } from '../../commands/catalog/taxonomy.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { followedBy, projectionOf, type EventHandlers, type Projection } from '../../ledger/projection.ts';
import { catalogMigrations } from './catalog-migrations.ts';
import { refreshQualityScore } from './quality-score-column.ts';
import { taxonomyHandlers } from './taxonomy-handlers.ts';

const at = (event: RecordedEvent) => new Date(event.envelope.occurredAt);

const columnOf = (field: ProductField) => (field === 'templateId' ? 'template_id' : field);

/** The product's rows; its quality score is recomputed after each (see `handlers`). */
const productRows: EventHandlers<ProductEvent> = {
  ProductCreated: (event, { table }) =>
    table('products')
      .insert({
        id: event.data.productId,
        tenant_id: event.envelope.tenantId,
        org_id: event.envelope.orgId,
        title: event.data.title,
        description: event.data.description,
        category: event.data.category,
        sku: event.data.sku ?? null,
        brand: event.data.brand ?? null,
        template_id: event.data.templateId ?? null,
        attributes: JSON.stringify(event.data.attributes ?? {}),
        status: event.data.status,
        created_at: at(event),
        updated_at: at(event),
      })
      .onConflict('id')
      .ignore(),
  ProductUpdated: async (event, { table }) => {
    const attributeChanges = event.data.attributeChanges ?? [];
    const row: { attributes: AttributeValues } | undefined =
      attributeChanges.length > 0 ? await table('products').where({ id: event.data.productId }).first('attributes') : undefined;
    await table('products')
      .where({ id: event.data.productId })
      .update({
        ...Object.fromEntries(event.data.changes.map((change) => [columnOf(change.field), change.current])),
        ...(row ? { attributes: JSON.stringify(applyAttributeChanges(row.attributes, attributeChanges)) } : {}),
        updated_at: at(event),
      });
  },
  ProductDeleted: async (event, { table }) => {
    await table('media').where({ product_id: event.data.productId }).delete();
    await table('variants').where({ product_id: event.data.productId }).delete();
    await table('products').where({ id: event.data.productId }).delete();
  },
  VariantAdded: (event, { table }) =>
    table('variants')
      .insert({
        id: event.data.variantId,
        product_id: event.data.productId,
        tenant_id: event.envelope.tenantId,
        org_id: event.envelope.orgId,
        sku: event.data.sku,
        barcode: event.data.barcode,
        price: event.data.price,
        currency: event.data.currency,
        created_at: at(event),
      })
      .onConflict('id')
      .ignore(),
  MediaAdded: (event, { table }) =>
    table('media')
      .insert({
        id: event.data.mediaId,
        tenant_id: event.envelope.tenantId,
        org_id: event.envelope.orgId,
        product_id: event.data.productId,
        variant_id: event.data.variantId,
        url: event.data.url,
        alt_text: event.data.altText,
        sort_order: event.data.sortOrder,
        created_at: at(event),
        updated_at: at(event),
      })
      .onConflict('id')
      .ignore(),
};

type CatalogEvent = ProductEvent | TaxonomyEvent | BrandEvent;

const handlers: EventHandlers<CatalogEvent> = {
  // Every product event may change what the product's quality facts are (commands/quality/product-facts.ts).
  ...followedBy(productRows, (event, context) => refreshQualityScore(context, event.data.productId)),
  ...taxonomyHandlers,
};

/** The catalog: products and their variants, brands and the taxonomy, as the PIM endpoints and the statistics read them. */
export const catalogProjection: Projection = projectionOf({
  name: 'catalog',
  topics: [productAggregate.events, taxonomyAggregate.events, brandAggregate.events],
  migrations: catalogMigrations,
  handlers,
});
