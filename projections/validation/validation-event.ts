import type { BulkJobEvent } from '../../commands/bulk/bulk-job.ts';
import type { ProductQualityEvent } from '../../commands/quality/product-quality.ts';
import type { SkuUsageEvent } from '../../commands/quality/sku-usage.ts';

/** The events of the topics the validation read model reads. */
export type ValidationEvent = ProductQualityEvent | SkuUsageEvent | BulkJobEvent;

/**
 * Each of them, spelt once, so a new event of these topics fails to compile until the validation says whether it reads
 * it. The rest say nothing of issues: the score is on the product record already (the catalog computes it), SKU counts
 * only feed the SKU usage aggregates' duplicate issues, and the rest of a bulk job's story is the job's own.
 */
const issueEvents: Record<ValidationEvent['type'], boolean> = {
  ValidationIssueRaised: true,
  ValidationIssueResolved: true,
  BulkItemsProcessed: true,
  ProductQualityAssessed: false,
  SkuUsesCounted: false,
  BulkItemsAttached: false,
  BulkJobSubmitted: false,
  BulkJobStarted: false,
  BulkJobCompleted: false,
  BulkJobFailed: false,
};

/** The events that raise or resolve an issue: what the validation handles. */
export const issueEventTypes = Object.entries(issueEvents).flatMap(([type, handled]) => (handled ? [type as ValidationEvent['type']] : []));
