import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { catalogExportAggregate, catalogExportsIdOf } from '../../commands/export/catalog-export.ts';
import { NotFoundError } from '../../ledger/errors.ts';
import {
  findExport,
  listExports,
  notificationSettings,
  noticesOf,
  type ExportRow,
  type NoticeRow,
} from '../../projections/export/export-queries.ts';
import type { ObjectStore } from '../../adapters/storage/object-store.ts';
import { webhookUrlProblem } from '../../adapters/notices/webhook-notice.ts';
import { createHeaders, newRecord } from '../idempotency-key.ts';
import { errorResponses, standardHeaders, timestamp, uuid } from '../schemas.ts';

/** How long the links GET /exports hands out stay valid. */
export const EXPORT_LINK_SECONDS = 3_600;

const accepted = z
  .object({
    status: z.enum(['PENDING']).describe('The export waits for its turn; it starts once the tenant’s running export (if any) ends'),
    message: z.string(),
    export_id: uuid.describe('The export that serves this request (an export already waiting serves later requests too)'),
  })
  .meta({ id: 'ExportAccepted' });

const notice = z.object({
  channel: z.enum(['webhook', 'email']),
  delivered: z.boolean(),
  attempts: z.number().int(),
  detail: z.string().nullable().describe('The last answer or error when not delivered'),
  recorded_at: timestamp,
});

const exportRecord = z
  .object({
    id: uuid,
    tenant_id: uuid,
    org_id: uuid,
    status: z.enum(['PENDING', 'RUNNING', 'COMPLETED', 'FAILED']),
    requests: z.number().int().describe('Requests this export serves (later ones join an export still waiting)'),
    requested_by: z.string().nullable(),
    requested_at: timestamp,
    started_at: timestamp.nullable(),
    finished_at: timestamp.nullable(),
    product_count: z.number().int().nullable().describe('Products written (DRAFT ones included and marked)'),
    draft_count: z.number().int().nullable(),
    excluded_count: z.number().int().nullable().describe('Products left out for an open ERROR validation issue (ids in the manifest)'),
    bytes: z.number().int().nullable(),
    download_url: z.string().nullable().describe(`Products, gzip-compressed JSON lines; a fresh link valid ${EXPORT_LINK_SECONDS} s`),
    taxonomy_url: z.string().nullable().describe('Categories, brands, attributes, attribute groups and templates, same format'),
    manifest_url: z.string().nullable().describe('Counts, checksums, schema version and the log position the snapshot reflects'),
    links_expire_at: timestamp.nullable(),
    error: z.string().nullable(),
    notices: z.array(notice),
  })
  .meta({ id: 'CatalogExport' });

const settings = z
  .object({
    webhook_url: z
      .url({ protocol: /^https?$/ })
      .max(2_000)
      .refine((url) => webhookUrlProblem(url) === undefined, { message: 'must be an absolute http(s) URL without credentials' })
      .nullable()
      .default(null)
      .describe(
        'POSTed a notice signed by Standard Webhooks when an export ends (see docs/decisions.md, "Export completion notices"); ' +
          'null or absent: none',
      ),
    email: z.email().max(320).nullable().default(null).describe('Mailed a notice when an export ends; null or absent: none'),
  })
  .strict()
  .meta({ id: 'ExportNotificationSettings' });

async function linksOf(store: ObjectStore, row: ExportRow, now: number) {
  if (row.status !== 'COMPLETED' || !row.products_key || !row.taxonomy_key || !row.manifest_key) {
    return { download_url: null, taxonomy_url: null, manifest_url: null, links_expire_at: null };
  }
  const link = (key: string, filename: string) => store.downloadUrl(key, { expiresInSeconds: EXPORT_LINK_SECONDS, filename });
  const [download_url, taxonomy_url, manifest_url] = await Promise.all([
    link(row.products_key, `catalog-${row.id}-products.jsonl.gz`),
    link(row.taxonomy_key, `catalog-${row.id}-taxonomy.jsonl.gz`),
    link(row.manifest_key, `catalog-${row.id}-manifest.json`),
  ]);
  return { download_url, taxonomy_url, manifest_url, links_expire_at: new Date(now + EXPORT_LINK_SECONDS * 1_000).toISOString() };
}

const toNotice = (n: NoticeRow): z.infer<typeof notice> => ({
  channel: n.channel,
  delivered: n.delivered,
  attempts: n.attempts,
  detail: n.detail,
  recorded_at: n.recorded_at.toISOString(),
});

export default async function exportRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute } = app.ledger;
  const tags = ['exports'];

  app.post('/export', {
    schema: {
      tags,
      summary: 'Export the whole catalog to object storage, asynchronously; the configured notice tells when it is done',
      headers: createHeaders,
      response: { 202: accepted, ...errorResponses },
    },
    handler: async (request, reply) => {
      const scope = request.principal;
      const { id: exportId, idempotency } = newRecord(request, 'export');
      const catalogExportsId = catalogExportsIdOf(scope.tenantId, scope.orgId);
      // A retry after the idempotency window names an export that exists already: it is answered, not requested again.
      const known = idempotency ? await findExport(db, scope, exportId) : undefined;
      if (!known) {
        await execute(request, catalogExportAggregate, { type: 'RequestExport', data: { catalogExportsId, exportId } }, idempotency);
      }
      const own = known ?? (await findExport(db, scope, exportId));
      // A request that found an export waiting joined it: that one serves it (it may have started, even ended, since).
      const recent = own ? [] : await listExports(db, scope, 5);
      const serving = own ?? recent.find((row) => row.status === 'PENDING' || row.status === 'RUNNING') ?? recent[0];
      if (!serving) throw new NotFoundError(`export ${exportId} not found`);
      const target = await notificationSettings(db, scope);
      const channels = [target?.webhook_url ? 'webhook' : null, target?.email ? 'email' : null].filter(Boolean).join(' and ');
      const how = channels
        ? `a notice goes out by ${channels} when it is done`
        : 'no completion notice is configured (PUT /api/v1/pim/export/notification); GET /api/v1/pim/exports lists exports';
      const what = own
        ? `Export ${exportId} is queued`
        : `An export was already waiting to start; export ${serving.id} serves this request too`;
      reply.code(202);
      return { status: 'PENDING' as const, message: `${what}; ${how}.`, export_id: serving.id };
    },
  });

  app.get('/exports', {
    schema: {
      tags,
      summary: 'The 100 most recent exports, newest first, with fresh download links for completed ones',
      headers: standardHeaders,
      response: { 200: z.array(exportRecord), ...errorResponses },
    },
    handler: async (request) => {
      const rows = await listExports(db, request.principal);
      const notices = await noticesOf(
        db,
        request.principal,
        rows.map((r) => r.id),
      );
      const now = Date.now();
      return Promise.all(
        rows.map(async (row) => ({
          id: row.id,
          tenant_id: row.tenant_id,
          org_id: row.org_id,
          status: row.status,
          requests: row.requests,
          requested_by: row.requested_by,
          requested_at: row.requested_at.toISOString(),
          started_at: row.started_at?.toISOString() ?? null,
          finished_at: row.finished_at?.toISOString() ?? null,
          product_count: row.product_count,
          draft_count: row.draft_count,
          excluded_count: row.excluded_count,
          bytes: row.bytes === null ? null : Number(row.bytes),
          ...(await linksOf(app.objectStore, row, now)),
          error: row.error,
          notices: notices.filter((n) => n.export_id === row.id).map(toNotice),
        })),
      );
    },
  });

  app.get('/export/notification', {
    schema: {
      tags,
      summary: 'Where export completion notices go',
      headers: standardHeaders,
      response: { 200: settings, ...errorResponses },
    },
    handler: async (request) => {
      const row = await notificationSettings(db, request.principal);
      return { webhook_url: row?.webhook_url ?? null, email: row?.email ?? null };
    },
  });

  app.put('/export/notification', {
    schema: {
      tags,
      summary: 'Set where export completion notices go: a webhook, an email address, both or neither',
      description:
        'Replaces both settings: a field left out, like `null`, means none. Webhook notices follow Standard Webhooks, signed with ' +
        'the `notice_secret` of `GET /api/v1/integrations/webhook-secret`.',
      headers: standardHeaders,
      body: settings,
      response: { 200: settings, ...errorResponses },
    },
    handler: async (request) => {
      const scope = request.principal;
      const { webhook_url: webhookUrl, email } = request.body;
      const catalogExportsId = catalogExportsIdOf(scope.tenantId, scope.orgId);
      await execute(request, catalogExportAggregate, {
        type: 'ConfigureExportNotification',
        data: { catalogExportsId, webhookUrl, email },
      });
      return { webhook_url: webhookUrl, email };
    },
  });
}
