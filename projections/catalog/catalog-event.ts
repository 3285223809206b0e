import type { BrandEvent } from '../../commands/catalog/brand.ts';
import type { ProductEvent } from '../../commands/catalog/product.ts';
import type { TaxonomyEvent } from '../../commands/catalog/taxonomy.ts';

/** The events the catalog read model is made of. */
export type CatalogEvent = ProductEvent | TaxonomyEvent | BrandEvent;

/** Each product event, spelt once, so a new one fails to compile until the projections that read them say so. */
const productEvents: Record<ProductEvent['type'], true> = {
  ProductCreated: true,
  ProductUpdated: true,
  ProductDeleted: true,
  VariantAdded: true,
  MediaAdded: true,
};

export const productEventTypes = Object.keys(productEvents) as ProductEvent['type'][];

const taxonomyEvents: Record<(TaxonomyEvent | BrandEvent)['type'], true> = {
  CategoryCreated: true,
  AttributeCreated: true,
  AttributeGroupCreated: true,
  TemplateCreated: true,
  BrandCreated: true,
};

export const catalogEventTypes: CatalogEvent['type'][] = [...productEventTypes, ...(Object.keys(taxonomyEvents) as CatalogEvent['type'][])];
