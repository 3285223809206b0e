import { productQualityAggregate, type ProductQualityEvent } from '../../commands/quality/product-quality.ts';
import { skuUsageAggregate, type SkuUsageEvent } from '../../commands/quality/sku-usage.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { projectionOf, type EventHandlers, type Projection } from '../../ledger/projection.ts';
import { applyValidationBatch, raisedAgain, raisedRow } from './validation-batch.ts';
import { validationMigrations } from './validation-migrations.ts';

type QualityEvent = ProductQualityEvent | SkuUsageEvent;

const at = (event: RecordedEvent) => new Date(event.envelope.occurredAt);

const handlers: EventHandlers<QualityEvent> = {
  // The score is on the product record already (the catalog projection computes it with the same rules).
  ProductQualityAssessed: async () => undefined,
  // SKU counts only feed the SKU usage aggregates' duplicate issues.
  SkuUsesCounted: async () => undefined,
  // Raised again after a resolve (the same problem came back), it is the same issue, open once more.
  ValidationIssueRaised: (event, { table }) =>
    table('validation_issues')
      .insert(raisedRow(event))
      .onConflict('id')
      .merge([...raisedAgain]),
  ValidationIssueResolved: (event, { table }) =>
    table('validation_issues')
      .where({ id: event.data.issueId })
      .update({ resolved: true, updated_at: at(event) }),
};

/** Validation issues and quality scores, as GET /api/v1/pim/validation and the statistics read them. */
export const validationProjection: Projection = projectionOf({
  name: 'validation',
  topics: [productQualityAggregate.events, skuUsageAggregate.events],
  migrations: validationMigrations,
  handlers,
  applyBatch: applyValidationBatch,
});
