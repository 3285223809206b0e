import { brandAggregate } from '../../commands/catalog/brand.ts';
import { productAggregate } from '../../commands/catalog/product.ts';
import { taxonomyAggregate } from '../../commands/catalog/taxonomy.ts';
import { projection, type Projection } from '../../ledger/projection.ts';
import { applyCatalogBatch } from './catalog-batch.ts';
import { catalogEventTypes, type CatalogEvent } from './catalog-event.ts';
import { catalogMigrations } from './catalog-migrations.ts';

/** The catalog: products and their variants, brands and the taxonomy, as the PIM endpoints and the statistics read them. */
export const catalogProjection: Projection = projection<CatalogEvent>({
  name: 'catalog',
  // A product write waits for the catalog (its product events) and for validation (its quality events): one consumer and
  // one transaction for both, and for the audit trail of the same events.
  runner: 'product-writes',
  topics: [productAggregate.events, taxonomyAggregate.events, brandAggregate.events],
  migrations: catalogMigrations,
  canHandle: catalogEventTypes,
  handle: applyCatalogBatch,
});
