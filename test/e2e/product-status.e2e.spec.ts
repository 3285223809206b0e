import { describe, expect, it } from 'vitest';
import { jobEnd, submitJob } from '../support/bulk.ts';
import type { Tenant } from '../support/client.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

const statsOf = async (tenant: Tenant) => (await tenant.request('GET', '/api/v1/pim/stats')).body;
const statusOf = async (tenant: Tenant, id: string) => (await tenant.request('GET', `/api/v1/pim/products/${id}`)).body.status;

describe('product status', () => {
  it('moves a product to DRAFT and back to ACTIVE, and active_products follows', async () => {
    const tenant = await ctx.newTenant();
    const { body: product } = await tenant.request('POST', '/api/v1/pim/products', { title: 'Lamp' });
    await tenant.request('POST', '/api/v1/pim/products', { title: 'Chair' });
    expect(product.status).toBe('ACTIVE');
    expect(await statsOf(tenant)).toMatchObject({ total_products: 2, active_products: 2 });

    const drafted = await tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { status: 'DRAFT' });
    expect(drafted.status).toBe(200);
    expect(drafted.body).toMatchObject({ id: product.id, title: 'Lamp', status: 'DRAFT' });
    expect(await statusOf(tenant, product.id)).toBe('DRAFT');
    expect(await statsOf(tenant)).toMatchObject({ total_products: 2, active_products: 1 });

    // Asking for the status it already has changes nothing, not even updated_at.
    const again = await tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { status: 'DRAFT' });
    expect(again.body.updated_at).toBe(drafted.body.updated_at);

    const activated = await tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { status: 'ACTIVE', title: 'Desk lamp' });
    expect(activated.body).toMatchObject({ title: 'Desk lamp', status: 'ACTIVE' });
    expect(await statsOf(tenant)).toMatchObject({ total_products: 2, active_products: 2 });
  });

  it('refuses a status that is neither ACTIVE nor DRAFT, and a status on creation', async () => {
    const { body: product } = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Mug' });
    for (const status of ['ARCHIVED', 'draft', null, 1]) {
      const refused = await ctx.tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { status });
      expect(refused.status, JSON.stringify(status)).toBe(400);
      expect(refused.body).toEqual({ error: { code: 'validation_failed', message: expect.any(String), details: expect.any(Array) } });
      expect(refused.body.error.details.map((d: { path: string }) => d.path)).toContain('body.status');
    }
    const created = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Mug', status: 'DRAFT' });
    expect(created.status).toBe(400);
    expect(await statusOf(ctx.tenant, product.id)).toBe('ACTIVE');
  });

  it("does not let another tenant change a product's status", async () => {
    const { body: product } = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Private' });
    const other = await ctx.newTenant();
    const refused = await other.request('PUT', `/api/v1/pim/products/${product.id}`, { status: 'DRAFT' });
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('not_found');
    expect(await statusOf(ctx.tenant, product.id)).toBe('ACTIVE');
  });

  it('changes the status of many products with a bulk update, item by item', async () => {
    const tenant = await ctx.newTenant();
    const ids: string[] = [];
    for (const title of ['A', 'B', 'C']) ids.push((await tenant.request('POST', '/api/v1/pim/products', { title })).body.id);
    const [a, b, c] = ids as [string, string, string];

    const drafted = await submitJob(tenant, 'BULK_UPDATE', { ids: [a, b], set: { status: 'DRAFT' } });
    expect((await jobEnd(tenant, drafted.body.id)).job).toMatchObject({ status: 'COMPLETED', processed_items: 2, failed_items: 0 });
    expect([await statusOf(tenant, a), await statusOf(tenant, b), await statusOf(tenant, c)]).toEqual(['DRAFT', 'DRAFT', 'ACTIVE']);
    expect(await statsOf(tenant)).toMatchObject({ total_products: 3, active_products: 1 });

    const mixed = await submitJob(tenant, 'BULK_UPDATE', [
      { id: a, status: 'ACTIVE' },
      { id: c, status: 'RETIRED' },
    ]);
    const { job } = await jobEnd(tenant, mixed.body.id);
    // A job with a failed item ends FAILED, having applied the others (docs/decisions.md, "Bulk jobs").
    expect(job).toMatchObject({ status: 'FAILED', processed_items: 1, failed_items: 1 });
    expect(job.errors).toEqual([expect.objectContaining({ item_index: 1, code: 'INVALID_FIELD', product_id: c })]);
    expect([await statusOf(tenant, a), await statusOf(tenant, c)]).toEqual(['ACTIVE', 'ACTIVE']);
    expect(await statsOf(tenant)).toMatchObject({ active_products: 2 });
  });
});
