import type { ProductEvent } from '../commands/catalog/product.ts';
import { qualityIdOf, type AssessCatalogChange } from '../commands/quality/data-quality.ts';
import type { EventRoute } from '../ledger/event-router.ts';
import { topics } from '../ledger/topics.ts';

const judged: ReadonlySet<string> = new Set<ProductEvent['type'] | 'TemplateCreated'>([
  'ProductCreated',
  'ProductUpdated',
  'ProductDeleted',
  'VariantAdded',
  'MediaAdded',
  // Templates say which attributes their products must fill (the quality score).
  'TemplateCreated',
]);

/** Data-quality validation: every catalog change goes to its tenant's data-quality aggregate, which raises or resolves issues. */
export const validationRoute: EventRoute = {
  name: 'validation',
  topics: [topics.productEvents, topics.taxonomyEvents],
  route: (event) => {
    if (!judged.has(event.type)) return [];
    const qualityId = qualityIdOf(event.envelope.tenantId, event.envelope.orgId);
    const change = { type: event.type, data: event.data } as AssessCatalogChange['data']['change'];
    const command: Pick<AssessCatalogChange, 'type' | 'data'> = { type: 'AssessCatalogChange', data: { qualityId, change } };
    return [{ topic: topics.qualityCommands, aggregateId: qualityId, command }];
  },
};
