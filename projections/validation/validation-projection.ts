import { productQualityAggregate, type ProductQualityEvent } from '../../commands/quality/product-quality.ts';
import { skuUsageAggregate, type SkuUsageEvent } from '../../commands/quality/sku-usage.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { projectionOf, type EventHandlers, type Projection } from '../../ledger/projection.ts';
import { applyValidationBatch, bulkItemIssues, raisedAgain, raisedRow } from './validation-batch.ts';
import { bulkJobAggregate, type BulkJobEvent } from '../../commands/bulk/bulk-job.ts';
import { validationMigrations } from './validation-migrations.ts';

type QualityEvent = ProductQualityEvent | SkuUsageEvent | BulkJobEvent;

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
  BulkItemsProcessed: async (event, { table }) => {
    const rows = bulkItemIssues(event);
    if (rows.length > 0) await table('validation_issues').insert(rows).onConflict('id').ignore();
  },
  // The rest of a bulk job's story is the job's own (GET /api/v1/pim/bulk-jobs).
  BulkItemsAttached: async () => undefined,
  BulkJobSubmitted: async () => undefined,
  BulkJobStarted: async () => undefined,
  BulkJobCompleted: async () => undefined,
  BulkJobFailed: async () => undefined,
  ValidationIssueResolved: (event, { table }) =>
    table('validation_issues')
      .where({ id: event.data.issueId })
      .update({ resolved: true, updated_at: at(event) }),
};

/** Validation issues (the catalog's and bulk jobs' failed items) as GET /api/v1/pim/validation and the statistics read them. */
export const validationProjection: Projection = projectionOf({
  name: 'validation',
  // With the catalog's, which product writes wait for too (see catalog-projection.ts).
  runner: 'product-writes',
  topics: [productQualityAggregate.events, skuUsageAggregate.events, bulkJobAggregate.events],
  // A bulk job's submission waits for the bulk read model only; its failed items reach this one later anyway.
  awaitedOn: [productQualityAggregate.events, skuUsageAggregate.events],
  migrations: validationMigrations,
  handlers,
  applyBatch: applyValidationBatch,
});
