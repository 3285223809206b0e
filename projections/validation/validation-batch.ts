import type { ValidationIssueRaised } from '../../commands/quality/validation-issue.ts';
import { uuidv5 } from '../../ledger/uuid-v5.ts';
import type { BulkItemsProcessed } from '../../commands/bulk/bulk-job.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import type { ProjectionContext } from '../../ledger/projection.ts';
import { insertRows, tableIn } from '../record-set.ts';
import type { ValidationEvent } from './validation-event.ts';

const at = (event: RecordedEvent) => new Date(event.envelope.occurredAt);

/** The issue's row as a raise inserts it; raised again, only the columns `raisedAgain` names change. */
const raisedRow = (event: RecordedEvent<ValidationIssueRaised>) => {
  const { issueId, productId, issueType, severity, message } = event.data;
  return {
    id: issueId,
    tenant_id: event.envelope.tenantId,
    org_id: event.envelope.orgId,
    product_id: productId,
    issue_type: issueType,
    severity,
    message,
    resolved: false,
    created_at: at(event),
    updated_at: at(event),
    bulk_job_id: null as string | null,
    item_index: null as number | null,
  };
};

const BULK_ISSUE_NAMESPACE = '0f6f8d52-3c1e-4b7a-9e2d-5a4c8b9f1e63';

/** Each failed item of a bulk job's slice as an open ERROR issue naming the job and the item. */
const bulkItemIssues = (event: RecordedEvent<BulkItemsProcessed>): IssueRow[] =>
  event.data.failures.map(({ index, code, message, productId }) => ({
    id: uuidv5(`${event.data.jobId}/${index}`, BULK_ISSUE_NAMESPACE),
    tenant_id: event.envelope.tenantId,
    org_id: event.envelope.orgId,
    product_id: productId,
    issue_type: 'BULK_ITEM_FAILED',
    severity: 'ERROR',
    message: `bulk job ${event.data.jobId}, item ${index}: ${code}: ${message}`,
    resolved: false,
    created_at: at(event),
    updated_at: at(event),
    bulk_job_id: event.data.jobId,
    item_index: index,
  }));

const raisedAgain = ['severity', 'message', 'resolved', 'updated_at'] as const;

type IssueRow = Omit<ReturnType<typeof raisedRow>, 'product_id' | 'issue_type' | 'severity'> & {
  product_id: string | null;
  issue_type: string;
  severity: string;
};
/**
 * What a batch of validation events does, folded per issue in log order without reading: from an issue's first raise
 * in the batch on, its row is known to exist and its last state is one upsert (a resolve before that raise is
 * overwritten by it); an issue only resolved in the batch is one update, of the rows that exist.
 */
export async function applyValidationBatch(events: RecordedEvent<ValidationEvent>[], { sql, schema }: ProjectionContext): Promise<void> {
  const upserts = new Map<string, IssueRow>();
  const resolvedOnly = new Map<string, Date>();
  for (const event of events) {
    switch (event.type) {
      case 'ValidationIssueRaised': {
        const id = event.data.issueId.toLowerCase();
        const raised = raisedRow(event);
        const before = upserts.get(id);
        upserts.set(id, before ? { ...before, ...Object.fromEntries(raisedAgain.map((column) => [column, raised[column]])) } : raised);
        resolvedOnly.delete(id);
        break;
      }
      case 'BulkItemsProcessed':
        // A failed item's issue is raised once and never resolved by another event: the first row stands.
        for (const row of bulkItemIssues(event)) if (!upserts.has(row.id)) upserts.set(row.id, row);
        break;
      case 'ValidationIssueResolved': {
        const id = event.data.issueId.toLowerCase();
        const raised = upserts.get(id);
        if (raised) upserts.set(id, { ...raised, resolved: true, updated_at: at(event) });
        else resolvedOnly.set(id, at(event));
        break;
      }
    }
  }
  const rows = [...upserts.values()];
  const merge = raisedAgain.map((column) => `${column} = excluded.${column}`).join(', ');
  await insertRows(sql, schema, 'validation_issues', rows, `on conflict (id) do update set ${merge}`);
  if (resolvedOnly.size > 0) {
    await sql.query(
      `update ${tableIn(schema, 'validation_issues')} issues set resolved = true, updated_at = resolved.at
       from unnest($1::uuid[], $2::timestamptz[]) as resolved(id, at) where issues.id = resolved.id`,
      [[...resolvedOnly.keys()], [...resolvedOnly.values()].map((date) => date.toISOString())],
    );
  }
}
