import type { Knex } from 'knex';
import type { NoticeChannel } from '../../commands/export/catalog-export.ts';
import type { Actor } from '../../ledger/message.ts';
import { liveSchema } from '../../ledger/projection.ts';
import type { Scope } from '../catalog/catalog-queries.ts';
import { exportProjection } from './export-projection.ts';

const schema = liveSchema(exportProjection);

export type ExportStatus = 'PENDING' | 'RUNNING' | 'COMPLETED' | 'FAILED';

export type ExportRow = {
  id: string;
  tenant_id: string;
  org_id: string;
  catalog_exports_id: string;
  status: ExportStatus;
  requests: number;
  requested_by: string | null;
  product_count: number | null;
  draft_count: number | null;
  excluded_count: number | null;
  bytes: string | null;
  manifest_key: string | null;
  products_key: string | null;
  taxonomy_key: string | null;
  error: string | null;
  notify_webhook_url: string | null;
  notify_email: string | null;
  requested_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
};

export type NoticeRow = {
  export_id: string;
  channel: NoticeChannel;
  delivered: boolean;
  attempts: number;
  detail: string | null;
  recorded_at: Date;
};
export type NotificationSettingsRow = { webhook_url: string | null; email: string | null; updated_at: Date };

const columns = [
  'id',
  'tenant_id',
  'org_id',
  'catalog_exports_id',
  'status',
  'requests',
  'requested_by',
  'product_count',
  'draft_count',
  'excluded_count',
  'bytes',
  'manifest_key',
  'products_key',
  'taxonomy_key',
  'error',
  'notify_webhook_url',
  'notify_email',
  'requested_at',
  'started_at',
  'finished_at',
];

/** The tenant's most recent exports, newest first. */
export const listExports = (db: Knex, { tenantId, orgId }: Scope, limit = 100): Promise<ExportRow[]> =>
  db(`${schema}.exports`)
    .where({ tenant_id: tenantId, org_id: orgId })
    .orderBy([{ column: 'requested_at', order: 'desc' }, { column: 'id' }])
    .limit(limit)
    .select(columns);

export const findExport = (db: Knex, { tenantId, orgId }: Scope, id: string): Promise<ExportRow | undefined> =>
  db(`${schema}.exports`).where({ id, tenant_id: tenantId, org_id: orgId }).first(columns);

/** The notices of the owner's exports among `exportIds`. */
export const noticesOf = (db: Knex, { tenantId, orgId }: Scope, exportIds: string[]): Promise<NoticeRow[]> =>
  exportIds.length === 0
    ? Promise.resolve([])
    : db(`${schema}.notices as n`)
        .join(`${schema}.exports as e`, 'e.id', 'n.export_id')
        .where({ 'e.tenant_id': tenantId, 'e.org_id': orgId })
        .whereIn('n.export_id', exportIds)
        .orderBy(['n.export_id', 'n.channel'])
        .select('n.export_id', 'n.channel', 'n.delivered', 'n.attempts', 'n.detail', 'n.recorded_at');

export const notificationSettings = (db: Knex, { tenantId, orgId }: Scope): Promise<NotificationSettingsRow | undefined> =>
  db(`${schema}.notification_settings`).where({ tenant_id: tenantId, org_id: orgId }).first('webhook_url', 'email', 'updated_at');

export type WorkerExportRow = ExportRow & { actor: Actor };

/**
 * What the export worker has to do: per tenant, the export running or else the one waiting (a waiting one starts only
 * after the running one ended), oldest first.
 */
export const exportsToRun = (db: Knex, limit: number): Promise<WorkerExportRow[]> =>
  db
    .select([...columns, 'actor'])
    .from(
      db(`${schema}.exports`)
        .whereIn('status', ['PENDING', 'RUNNING'])
        .distinctOn('catalog_exports_id')
        .orderBy([{ column: 'catalog_exports_id' }, { column: 'status', order: 'desc' }, { column: 'requested_at' }])
        .select([...columns, 'actor'])
        .as('next'),
    )
    .orderBy('requested_at')
    .limit(limit);

/** Ended exports that owe a notice on a channel they had a target for, with no notice recorded on it yet. */
export const noticesOwed = (db: Knex, limit: number): Promise<(WorkerExportRow & { channel: NoticeChannel })[]> =>
  db
    .select([...columns.map((c) => `e.${c}`), 'e.actor', 'c.channel'])
    .from(`${schema}.exports as e`)
    .joinRaw(`cross join lateral (values ('webhook', e.notify_webhook_url), ('email', e.notify_email)) as c(channel, target)`)
    .leftJoin(`${schema}.notices as n`, function () {
      this.on('n.export_id', 'e.id').andOn('n.channel', 'c.channel');
    })
    .whereIn('e.status', ['COMPLETED', 'FAILED'])
    .whereNotNull('c.target')
    .whereNull('n.export_id')
    .orderBy('e.finished_at')
    .limit(limit);
