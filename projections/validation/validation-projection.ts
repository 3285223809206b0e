import { bulkJobAggregate } from '../../commands/bulk/bulk-job.ts';
import { productQualityAggregate } from '../../commands/quality/product-quality.ts';
import { skuUsageAggregate } from '../../commands/quality/sku-usage.ts';
import { projection, type Projection } from '../../ledger/projection.ts';
import { applyValidationBatch } from './validation-batch.ts';
import { issueEventTypes, type ValidationEvent } from './validation-event.ts';
import { validationMigrations } from './validation-migrations.ts';

/** Validation issues (the catalog's and bulk jobs' failed items) as GET /api/v1/pim/validation and the statistics read them. */
export const validationProjection: Projection = projection<ValidationEvent>({
  name: 'validation',
  // With the catalog's, which product writes wait for too (see catalog-projection.ts).
  runner: 'product-writes',
  topics: [productQualityAggregate.events, skuUsageAggregate.events, bulkJobAggregate.events],
  // A bulk job's submission waits for the bulk read model only; its failed items reach this one later anyway.
  awaitedOn: [productQualityAggregate.events, skuUsageAggregate.events],
  migrations: validationMigrations,
  canHandle: issueEventTypes,
  handle: applyValidationBatch,
});
