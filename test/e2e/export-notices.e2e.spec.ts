import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogExportAggregate } from '../../commands/export/catalog-export.ts';
import { jobEnd, submitJob } from '../support/bulk.ts';
import type { Tenant } from '../support/client.ts';
import { readEvents } from '../support/event-log.ts';
import { downloadExport, exportEnd, listExports, requestExport, type ExportRecord } from '../support/exports.ts';
import { plainText, standardWebhookVerifies as verifies, startHookReceiver, startMailReceiver } from '../support/notice-receivers.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

let hooks: Awaited<ReturnType<typeof startHookReceiver>>;
let mail: Awaited<ReturnType<typeof startMailReceiver>>;
beforeAll(async () => {
  [hooks, mail] = await Promise.all([startHookReceiver(), startMailReceiver()]);
});
afterAll(async () => {
  await Promise.all([hooks?.close(), mail?.close()]);
});

const ctx = useServiceAndTenant(() => ({
  env: {
    STORAGE_DIR: mkdtempSync(path.join(tmpdir(), 'export-notices-')),
    SMTP_URL: mail.smtpUrl,
    NOTICE_ALLOW_PRIVATE_NETWORKS: 'true', // the test's receivers listen on loopback

    NOTICE_FROM: 'Ledger <exports@ledger.test>',
  },
}));

const importProducts = async (tenant: Tenant, n: number) => {
  const items = Array.from({ length: n }, (_, i) => ({ title: `Noticed ${i}`, description: 'd', sku: `N-${i}-${randomUUID()}` }));
  expect((await jobEnd(tenant, (await submitJob(tenant, 'BULK_IMPORT', items)).body.id)).job.status).toBe('COMPLETED');
};

const configure = (tenant: Tenant, body: { webhook_url?: string | null; email?: string | null }) =>
  tenant.request('PUT', '/api/v1/pim/export/notification', body);

type WebhookSecretBody = { secret: string; notice_secret: string; version: number };
const noticeSecret = async (tenant: Tenant) =>
  (await tenant.request<WebhookSecretBody>('GET', '/api/v1/integrations/webhook-secret')).body.notice_secret;

const hooksFor = (exportId: string) => hooks.received.filter((hook) => JSON.parse(hook.body).id === exportId);

async function noticesRecorded(tenant: Tenant, exportId: string, count: number): Promise<ExportRecord> {
  for (const until = Date.now() + 60_000; Date.now() < until;) {
    const record = (await listExports(tenant)).find((e) => e.id === exportId);
    if (record && record.notices.length >= count) return record;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`export ${exportId} has not recorded ${count} notices`);
}

describe('export completion notices', () => {
  it('sets, reads and validates where notices go; an absent field, like null, means none', async () => {
    const tenant = await ctx.newTenant();
    expect((await tenant.request('GET', '/api/v1/pim/export/notification')).body).toEqual({ webhook_url: null, email: null });
    const body = { webhook_url: 'https://hooks.example.com/exports', email: 'ops@example.com' };
    expect((await configure(tenant, body)).body).toEqual(body);
    expect((await tenant.request('GET', '/api/v1/pim/export/notification')).body).toEqual(body);
    for (const [partial, stored] of [
      [{ webhook_url: body.webhook_url }, { webhook_url: body.webhook_url, email: null }],
      [{ email: body.email }, { webhook_url: null, email: body.email }],
      [{ webhook_url: null }, { webhook_url: null, email: null }],
      [body, body],
      [{}, { webhook_url: null, email: null }],
    ] as const) {
      const put = await configure(tenant, partial);
      expect(put.status, JSON.stringify(partial)).toBe(200);
      expect(put.body, JSON.stringify(partial)).toEqual(stored);
      expect((await tenant.request('GET', '/api/v1/pim/export/notification')).body, JSON.stringify(partial)).toEqual(stored);
    }
    for (const bad of [
      { webhook_url: 'ftp://hooks.example.com/x', email: null },
      { webhook_url: 'not a url', email: null },
      { webhook_url: 'https://user:secret@hooks.example.com/x', email: null },
      { webhook_url: null, email: 'not-an-address' },
      { email: 'not-an-address' },
      { webhook: 'https://hooks.example.com/exports' },
    ]) {
      const refused = await configure(tenant, bad as never);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(refused.body).toMatchObject({ error: { code: 'validation_failed', message: expect.any(String) } });
    }
    expect((await tenant.request('GET', '/api/v1/pim/export/notification')).body).toEqual({ webhook_url: null, email: null });
    // Another tenant's settings are its own.
    const other = await ctx.newTenant();
    expect((await other.request('GET', '/api/v1/pim/export/notification')).body).toEqual({ webhook_url: null, email: null });
  });

  it('documents both settings as optional in the request and always present in the answer (OpenAPI)', async () => {
    const document = (await (await fetch(`${ctx.service.baseUrl}/openapi.json`)).json()) as any;
    const operation = document.paths['/api/v1/pim/export/notification'];
    const schemaOf = (content: any) => {
      const { $ref } = content['application/json'].schema;
      return document.components.schemas[($ref as string).replace('#/components/schemas/', '')];
    };
    const request = schemaOf(operation.put.requestBody.content);
    expect(Object.keys(request.properties).sort()).toEqual(['email', 'webhook_url']);
    expect(request.required ?? []).toEqual([]);
    expect(request.additionalProperties).toBe(false);
    expect(operation.put.requestBody.required).toBe(true);
    for (const answer of [operation.put.responses['200'], operation.get.responses['200']]) {
      expect(schemaOf(answer.content).required.sort()).toEqual(['email', 'webhook_url']);
    }
  });

  it('POSTs a notice signed with the tenant’s webhook secret and mails one, each carrying a working download link', async () => {
    const tenant = await ctx.newTenant();
    await importProducts(tenant, 25);
    await configure(tenant, { webhook_url: hooks.url(`/t/${tenant.tenantId}`), email: 'catalog-team@shop.test' });
    const accepted = await requestExport(tenant);
    expect(accepted.body.message).toMatch(/webhook and email/);
    const exportId = accepted.body.export_id;
    const record = await noticesRecorded(tenant, exportId, 2);
    expect(record.notices.map((n) => [n.channel, n.delivered]).sort()).toEqual([
      ['email', true],
      ['webhook', true],
    ]);

    const [hook] = hooksFor(exportId);
    expect(hooksFor(exportId)).toHaveLength(1);
    expect(hook!.headers['webhook-id']).toBe(exportId);
    expect(hook!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // The receiver's side: the Standard Webhooks library, with the whsec_ secret the tenant reads from the API.
    const secret = await noticeSecret(tenant);
    expect(secret).toMatch(/^whsec_/);
    expect(verifies(secret, hook!.headers, hook!.body)).toBe(true);
    const sentAt = Number(hook!.headers['webhook-timestamp']);
    expect(verifies(secret, { ...hook!.headers, 'webhook-id': randomUUID() }, hook!.body)).toBe(false);
    expect(verifies(secret, { ...hook!.headers, 'webhook-timestamp': String(sentAt + 1) }, hook!.body)).toBe(false);
    expect(verifies(secret, hook!.headers, hook!.body.replace('"product_count":25', '"product_count":26'))).toBe(false);
    expect(verifies(await noticeSecret(await ctx.newTenant()), hook!.headers, hook!.body)).toBe(false);
    const notice = JSON.parse(hook!.body);
    expect(notice).toMatchObject({
      type: 'catalog.export.completed',
      id: exportId,
      data: { export_id: exportId, tenant_id: tenant.tenantId, status: 'COMPLETED', product_count: 25, excluded_count: 0 },
    });
    const { products } = await downloadExport({
      ...record,
      download_url: notice.data.download_url,
      manifest_url: notice.data.manifest_url,
    });
    expect(products).toHaveLength(25);

    const message = mail.mails.find((m) => m.to.includes('catalog-team@shop.test'));
    expect(message).toBeDefined();
    expect(message!.from).toBe('exports@ledger.test');
    const text = plainText(message!.raw);
    expect(text).toContain(exportId);
    expect(text).toMatch(/25 products|Products: 25|products\s*25/i);
    expect(text).toContain(new URL(notice.data.download_url as string).pathname);
  });

  it('signs with both notice secrets during a rotation’s grace, and only with the two latest after a second rotation', async () => {
    const tenant = await ctx.newTenant();
    await importProducts(tenant, 2);
    await configure(tenant, { webhook_url: hooks.url(`/rotating/${tenant.tenantId}`) });
    const rotate = async () =>
      (await tenant.request<WebhookSecretBody>('POST', '/api/v1/integrations/webhook-secret/rotate')).body.notice_secret;
    const exportedHook = async () => {
      const exportId = (await requestExport(tenant)).body.export_id;
      await noticesRecorded(tenant, exportId, 1);
      const [hook] = hooksFor(exportId);
      if (!hook) throw new Error(`no notice received for export ${exportId}`);
      return hook;
    };

    const first = await noticeSecret(tenant);
    const second = await rotate();
    expect(second).not.toBe(first);
    const inGrace = await exportedHook();
    expect(inGrace.headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    expect(verifies(second, inGrace.headers, inGrace.body)).toBe(true);
    expect(verifies(first, inGrace.headers, inGrace.body)).toBe(true);

    const third = await rotate();
    const after = await exportedHook();
    expect(verifies(third, after.headers, after.body)).toBe(true);
    expect(verifies(second, after.headers, after.body)).toBe(true);
    expect(verifies(first, after.headers, after.body)).toBe(false);
  });

  it('retries a webhook that answers 503 until it is taken, with the same webhook-id each time', async () => {
    const tenant = await ctx.newTenant();
    await importProducts(tenant, 3);
    await configure(tenant, { webhook_url: hooks.url(`/flaky/${tenant.tenantId}`), email: null });
    hooks.script.push(503, 503);
    const exportId = (await requestExport(tenant)).body.export_id;
    const record = await noticesRecorded(tenant, exportId, 1);
    expect(record.notices).toEqual([expect.objectContaining({ channel: 'webhook', delivered: true, attempts: 3 })]);
    const deliveries = hooksFor(exportId);
    expect(deliveries).toHaveLength(3);
    expect(new Set(deliveries.map((d) => d.headers['webhook-id']))).toEqual(new Set([exportId]));
  });

  it('survives a SIGKILL mid-export: the export completes once and its notice goes out once', async () => {
    const tenant = await ctx.newTenant();
    await importProducts(tenant, 10_000);
    await configure(tenant, { webhook_url: hooks.url(`/crash/${tenant.tenantId}`), email: null });
    const exportId = (await requestExport(tenant)).body.export_id;
    let killed = false;
    for (const until = Date.now() + 60_000; Date.now() < until && !killed;) {
      const record = (await listExports(tenant)).find((e) => e.id === exportId);
      if (record?.status === 'COMPLETED') throw new Error('the export ended before the crash');
      if (record?.status === 'RUNNING') {
        await ctx.service.kill();
        killed = true;
      } else await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(killed).toBe(true);
    await ctx.service.restart();
    const { record } = await exportEnd(tenant, exportId);
    expect(record).toMatchObject({ status: 'COMPLETED', product_count: 10_000 });
    await noticesRecorded(tenant, exportId, 1);
    expect(hooksFor(exportId)).toHaveLength(1);
    const story = (await readEvents(ctx.service.namespace, catalogExportAggregate.events)).filter(
      (e) => (e.data as { exportId?: string }).exportId === exportId,
    );
    expect(story.map((e) => e.type)).toEqual(['ExportRequested', 'ExportStarted', 'ExportCompleted', 'ExportNoticeRecorded']);
    expect((await downloadExport(record)).products).toHaveLength(10_000);
  });
});
