import type { ProductEvent } from '../commands/catalog/product.ts';
import { qualityIdOf, type AssessCatalogChange } from '../commands/quality/data-quality.ts';
import type { EventRoute } from '../ledger/event-router.ts';
import { topics } from '../ledger/topics.ts';

const judged: ReadonlySet<string> = new Set<ProductEvent['type']>(['ProductCreated', 'ProductUpdated', 'ProductDeleted', 'VariantAdded', 'MediaAdded']);

/** Data-quality validation: every catalog change goes to its tenant's data-quality aggregate, which raises or resolves issues. */
export const validationRoute: EventRoute = {
  name: 'validation',
  topics: [topics.productEvents],
  route: (event) => {
    if (!judged.has(event.type)) return [];
    const qualityId = qualityIdOf(event.envelope.tenantId, event.envelope.orgId);
    const change = { type: event.type, data: event.data } as ProductEvent;
    const command: Pick<AssessCatalogChange, 'type' | 'data'> = { type: 'AssessCatalogChange', data: { qualityId, change } };
    return [{ topic: topics.qualityCommands, aggregateId: qualityId, command }];
  },
};
