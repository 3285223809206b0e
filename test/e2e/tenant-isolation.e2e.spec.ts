import { beforeAll, describe, expect, it } from 'vitest';
import type { Tenant } from '../support/client.ts';
import { downloadExport, exportEnd, listExports, requestExport } from '../support/exports.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();
let owner: Tenant;
let product: { id: string; title: string };
let variant: { id: string };

beforeAll(async () => {
  owner = ctx.tenant;
  product = (await owner.request('POST', '/api/v1/pim/products', { title: 'Secret formula' })).body;
  variant = (await owner.request('POST', `/api/v1/pim/products/${product.id}/variants`, { sku: 'SECRET-1', price: 9.5 })).body;
});

const outsiders = async () => [
  { who: 'another tenant', tenant: await ctx.newTenant() },
  { who: 'another org of the same tenant', tenant: await ctx.newTenant({ tenantId: owner.tenantId }) },
];

describe('tenant isolation', () => {
  it("never shows or lets anyone change another tenant's or org's product", async () => {
    for (const { who, tenant } of await outsiders()) {
      const attempts = [
        await tenant.request('GET', `/api/v1/pim/products/${product.id}`),
        await tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { title: 'Stolen' }),
        await tenant.request('DELETE', `/api/v1/pim/products/${product.id}`),
        await tenant.request('POST', `/api/v1/pim/products/${product.id}/variants`, { sku: 'INJECTED' }),
        await tenant.request('GET', `/api/v1/pim/products/${product.id}/variants`),
      ];
      expect(
        attempts.map((a) => a.status),
        who,
      ).toEqual([404, 404, 404, 404, 404]);
      for (const attempt of attempts) expect(attempt.body.error.code, who).toBe('not_found');

      expect((await tenant.request('GET', '/api/v1/pim/products')).body, who).toEqual([]);
      expect((await tenant.request('GET', '/api/v1/pim/audit')).body, who).toEqual([]);
      const stats = (await tenant.request('GET', '/api/v1/pim/stats')).body;
      expect(stats, who).toMatchObject({ total_products: 0, active_products: 0, total_variants: 0 });
    }
    const still = await owner.request('GET', `/api/v1/pim/products/${product.id}`);
    expect(still.body.title).toBe('Secret formula');
    const variants = await owner.request('GET', `/api/v1/pim/products/${product.id}/variants`);
    expect(variants.body.map((v: { id: string }) => v.id)).toEqual([variant.id]);
    const audit = await owner.request('GET', '/api/v1/pim/audit');
    expect(audit.body.map((e: { action: string }) => e.action)).toEqual(['variant.created', 'product.created']);
  });

  it("never shows another tenant's or org's exports, export settings or files", async () => {
    await owner.request('PUT', '/api/v1/pim/export/notification', { webhook_url: 'https://hooks.owner.test/x', email: 'owner@owner.test' });
    const ours = (await exportEnd(owner, (await requestExport(owner)).body.export_id)).record;
    expect(ours.status).toBe('COMPLETED');
    for (const { who, tenant } of await outsiders()) {
      expect(await listExports(tenant), who).toEqual([]);
      expect((await tenant.request('GET', '/api/v1/pim/export/notification')).body, who).toEqual({ webhook_url: null, email: null });
      const theirs = (await exportEnd(tenant, (await requestExport(tenant)).body.export_id)).record;
      expect(theirs.id, who).not.toBe(ours.id);
      expect((await downloadExport(theirs)).products, who).toEqual([]);
      // Their link signs their key only: pointed at ours, it is refused.
      const forged = (theirs.download_url as string)
        .replace(theirs.id, ours.id)
        .replace(tenant.tenantId, owner.tenantId)
        .replace(tenant.orgId, owner.orgId);
      expect((await fetch(forged)).status, who).toBe(403);
    }
    const after = await listExports(owner);
    expect(after.map((e) => e.id)).toEqual([ours.id]);
    expect((await downloadExport(after[0]!)).products.map((p) => p.id)).toEqual([product.id]);
  });
});
