import type { ProductEvent } from '../commands/catalog/product.ts';
import type { AssessCatalogChange } from '../commands/quality/product-quality.ts';
import type { EventRoute } from '../ledger/event-router.ts';
import { topics } from '../ledger/topics.ts';

const judged: ReadonlySet<string> = new Set<ProductEvent['type']>(['ProductCreated', 'ProductUpdated', 'ProductDeleted', 'VariantAdded', 'MediaAdded']);

/** Data-quality validation: every change of a product goes to that product's quality aggregate. */
export const validationRoute: EventRoute = {
  name: 'validation',
  topics: [topics.productEvents],
  route: (event) => {
    if (!judged.has(event.type)) return [];
    const change = { type: event.type, data: event.data } as ProductEvent;
    const command: Pick<AssessCatalogChange, 'type' | 'data'> = { type: 'AssessCatalogChange', data: { productId: change.data.productId, change } };
    return [{ topic: topics.productQualityCommands, aggregateId: change.data.productId, command }];
  },
};
