import { bulkJobAggregate, type BulkJobEvent } from '../../commands/bulk/bulk-job.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { projectionOf, type EventHandlers, type Projection } from '../../ledger/projection.ts';
import { bulkMigrations } from './bulk-migrations.ts';

const at = (event: RecordedEvent) => new Date(event.envelope.occurredAt);

/** Job rows appear at submission: a job whose chunks were attached but never submitted is not a job. */
const handlers: EventHandlers<BulkJobEvent> = {
  BulkItemsAttached: (event, { table }) => {
    const { jobId, chunk, firstIndex, itemCount, items } = event.data;
    return table('chunks')
      .insert({ job_id: jobId, chunk, first_index: firstIndex, item_count: itemCount, items })
      .onConflict(['job_id', 'chunk'])
      .ignore();
  },
  BulkJobSubmitted: (event, { table }) => {
    const { jobId, jobType, totalItems, chunkCount, payloadBytes } = event.data;
    return table('jobs')
      .insert({
        id: jobId,
        tenant_id: event.envelope.tenantId,
        org_id: event.envelope.orgId,
        job_type: jobType,
        status: 'PENDING',
        total_items: null,
        processed_items: null,
        failed_items: null,
        item_count: totalItems,
        chunk_count: chunkCount,
        payload_bytes: payloadBytes,
        created_by: event.envelope.actor.userId,
        actor: JSON.stringify(event.envelope.actor),
        created_at: at(event),
        updated_at: at(event),
      })
      .onConflict('id')
      .ignore();
  },
  BulkJobStarted: (event, { table }) =>
    table('jobs')
      .where({ id: event.data.jobId })
      .update({ status: 'PROCESSING', total_items: event.data.totalItems, processed_items: 0, failed_items: 0, updated_at: at(event) }),
  BulkItemsProcessed: async (event, { table, db }) => {
    const { jobId, succeeded, failures } = event.data;
    await table('jobs')
      .where({ id: jobId })
      .update({
        processed_items: db.raw('processed_items + ?', [succeeded]),
        failed_items: db.raw('failed_items + ?', [failures.length]),
        updated_at: at(event),
      });
    if (failures.length === 0) return;
    await table('item_errors')
      .insert(
        failures.map(({ index, code, message, productId }) => ({ job_id: jobId, item_index: index, code, message, product_id: productId })),
      )
      .onConflict(['job_id', 'item_index'])
      .ignore();
  },
  BulkJobCompleted: async (event, { table }) => {
    await table('jobs')
      .where({ id: event.data.jobId })
      .update({ status: 'COMPLETED', updated_at: at(event) });
    await table('chunks').where({ job_id: event.data.jobId }).delete();
  },
  BulkJobFailed: async (event, { table }) => {
    await table('jobs')
      .where({ id: event.data.jobId })
      .update({ status: 'FAILED', updated_at: at(event) });
    await table('chunks').where({ job_id: event.data.jobId }).delete();
  },
};

/** Bulk jobs as GET /api/v1/pim/bulk-jobs lists them, their item errors, and the payload chunks the bulk worker reads. */
export const bulkProjection: Projection = projectionOf({
  name: 'bulk',
  topics: [bulkJobAggregate.events],
  migrations: bulkMigrations,
  handlers,
});
