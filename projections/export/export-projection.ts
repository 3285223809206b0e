import { catalogExportAggregate, type CatalogExportEvent } from '../../commands/export/catalog-export.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { projectionOf, type EventHandlers, type Projection } from '../../ledger/projection.ts';
import { exportMigrations } from './export-migrations.ts';

const at = (event: RecordedEvent) => new Date(event.envelope.occurredAt);

const handlers: EventHandlers<CatalogExportEvent> = {
  ExportNotificationConfigured: (event, { table }) => {
    const { webhookUrl, email } = event.data;
    const row = { tenant_id: event.envelope.tenantId, org_id: event.envelope.orgId, webhook_url: webhookUrl, email, updated_at: at(event) };
    return table('notification_settings').insert(row).onConflict(['tenant_id', 'org_id']).merge();
  },
  ExportRequested: (event, { table }) =>
    table('exports')
      .insert({
        id: event.data.exportId,
        tenant_id: event.envelope.tenantId,
        org_id: event.envelope.orgId,
        catalog_exports_id: event.data.catalogExportsId,
        status: 'PENDING',
        requests: 1,
        requested_by: event.envelope.actor.userId,
        actor: JSON.stringify(event.envelope.actor),
        requested_at: at(event),
        updated_at: at(event),
      })
      .onConflict('id')
      .ignore(),
  ExportRequestJoined: (event, { table, db }) =>
    table('exports')
      .where({ id: event.data.exportId })
      .update({ requests: db.raw('requests + 1'), updated_at: at(event) }),
  ExportStarted: (event, { table }) =>
    table('exports')
      .where({ id: event.data.exportId })
      .update({ status: 'RUNNING', started_at: at(event), updated_at: at(event) }),
  ExportCompleted: (event, { table }) => {
    const d = event.data;
    return table('exports')
      .where({ id: d.exportId })
      .update({
        status: 'COMPLETED',
        product_count: d.productCount,
        draft_count: d.draftCount,
        excluded_count: d.excludedCount,
        bytes: d.bytes,
        manifest_key: d.manifestKey,
        products_key: d.productsKey,
        taxonomy_key: d.taxonomyKey,
        position: d.position,
        notify_webhook_url: d.webhookUrl,
        notify_email: d.email,
        finished_at: at(event),
        updated_at: at(event),
      });
  },
  ExportFailed: (event, { table }) =>
    table('exports')
      .where({ id: event.data.exportId })
      .update({
        status: 'FAILED',
        error: event.data.reason,
        notify_webhook_url: event.data.webhookUrl,
        notify_email: event.data.email,
        finished_at: at(event),
        updated_at: at(event),
      }),
  ExportNoticeRecorded: (event, { table }) => {
    const { exportId, channel, delivered, attempts, detail } = event.data;
    const row = { export_id: exportId, channel, delivered, attempts, detail, recorded_at: at(event) };
    return table('notices').insert(row).onConflict(['export_id', 'channel']).ignore();
  },
};

/** Exports as GET /api/v1/pim/exports lists them, their notices, and each tenant's notice settings; the export worker's queue. */
export const exportProjection: Projection = projectionOf({
  name: 'export',
  topics: [catalogExportAggregate.events],
  migrations: exportMigrations,
  handlers,
});
