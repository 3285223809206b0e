import { productAggregate, type AttributeValues, type ProductEvent } from '../../commands/catalog/product.ts';
import { brandAggregate, type BrandEvent } from '../../commands/catalog/brand.ts';
import { taxonomyAggregate, type TaxonomyEvent } from '../../commands/catalog/taxonomy.ts';
import { followedBy, projectionOf, type EventHandlers, type Projection } from '../../ledger/projection.ts';
import { knexRow } from '../record-set.ts';
import { applyCatalogBatch } from './catalog-batch.ts';
import { catalogMigrations } from './catalog-migrations.ts';
import { createdProduct, mediaRow, updatedColumns, variantRow } from './product-rows.ts';
import { refreshQualityScore } from './quality-score-column.ts';
import { taxonomyHandlers } from './taxonomy-handlers.ts';

/** The product's rows; its quality score is recomputed after each (see `handlers`). */
const productRows: EventHandlers<ProductEvent> = {
  ProductCreated: (event, { table }) =>
    table('products')
      .insert(knexRow(createdProduct(event)))
      .onConflict('id')
      .ignore(),
  ProductUpdated: async (event, { table }) => {
    const row: { attributes: AttributeValues } | undefined =
      (event.data.attributeChanges ?? []).length > 0
        ? await table('products').where({ id: event.data.productId }).first('attributes')
        : undefined;
    const { attributes, ...columns } = updatedColumns(event, () => row?.attributes ?? {});
    await table('products')
      .where({ id: event.data.productId })
      .update(knexRow({ ...columns, ...(row && attributes ? { attributes } : {}) }));
  },
  ProductDeleted: async (event, { table }) => {
    await table('media').where({ product_id: event.data.productId }).delete();
    await table('variants').where({ product_id: event.data.productId }).delete();
    await table('products').where({ id: event.data.productId }).delete();
  },
  VariantAdded: (event, { table }) =>
    table('variants')
      .insert(knexRow(variantRow(event)))
      .onConflict('id')
      .ignore(),
  MediaAdded: (event, { table }) =>
    table('media')
      .insert(knexRow(mediaRow(event)))
      .onConflict('id')
      .ignore(),
};

export type CatalogEvent = ProductEvent | TaxonomyEvent | BrandEvent;

const handlers: EventHandlers<CatalogEvent> = {
  // Every product event may change what the product's quality facts are (commands/quality/product-facts.ts).
  ...followedBy(productRows, (event, context) => refreshQualityScore(context, event.data.productId)),
  ...taxonomyHandlers,
};

/** The catalog: products and their variants, brands and the taxonomy, as the PIM endpoints and the statistics read them. */
export const catalogProjection: Projection = projectionOf({
  name: 'catalog',
  // A product write waits for the catalog (its product events) and for validation (its quality events): one consumer and
  // one transaction for both, and for the audit trail of the same events.
  runner: 'product-writes',
  topics: [productAggregate.events, taxonomyAggregate.events, brandAggregate.events],
  migrations: catalogMigrations,
  handlers,
  applyBatch: applyCatalogBatch,
});
