import { productAggregate, type ProductEvent } from '../commands/catalog/product.ts';
import { productQualityAggregate } from '../commands/quality/product-quality.ts';
import { routeTo, type EventRoute } from '../ledger/event-router.ts';

const judged: ReadonlySet<string> = new Set<ProductEvent['type']>([
  'ProductCreated',
  'ProductUpdated',
  'ProductDeleted',
  'VariantAdded',
  'MediaAdded',
]);

/** Data-quality validation: every change of a product goes to that product's quality aggregate. */
export const validationRoute: EventRoute = {
  name: 'validation',
  topics: [productAggregate.events],
  route: (event) => {
    if (!judged.has(event.type)) return [];
    const change = { type: event.type, data: event.data } as ProductEvent;
    return [routeTo(productQualityAggregate, { type: 'AssessCatalogChange', data: { productId: change.data.productId, change } })];
  },
};
