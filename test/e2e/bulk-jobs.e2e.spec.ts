import { randomUUID } from 'node:crypto';
import { eventually } from '../support/orders.ts';
import { describe, expect, it } from 'vitest';
import { jobEnd, submitJob } from '../support/bulk.ts';
import type { Tenant } from '../support/client.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

const products = (n: number, prefix = 'Item') =>
  Array.from({ length: n }, (_, i) => ({ title: `${prefix} ${i}`, sku: `${prefix}-${i}-${randomUUID().slice(0, 8)}`, description: 'd' }));

const productOf = (tenant: Tenant, id: string) => tenant.request('GET', `/api/v1/pim/products/${id}`);

type Issue = { issue_type: string; bulk_job_id: string | null; item_index: number | null; product_id: string | null; severity: string };

describe('bulk jobs', () => {
  it('imports, updates and deletes products, with the job PENDING at submission and ending COMPLETED', async () => {
    const tenant = await ctx.newTenant();
    const submitted = await submitJob(tenant, 'BULK_IMPORT', products(30));
    expect(submitted.status).toBe(200);
    expect(submitted.body).toMatchObject({
      job_type: 'BULK_IMPORT',
      status: 'PENDING',
      total_items: null,
      processed_items: null,
      tenant_id: tenant.tenantId,
      org_id: tenant.orgId,
    });
    expect(JSON.parse(submitted.body.payload_json as string)).toHaveLength(30);
    const { job } = await jobEnd(tenant, submitted.body.id);
    expect(job).toMatchObject({ status: 'COMPLETED', total_items: 30, processed_items: 30, failed_items: 0, errors: [] });

    const listed = (await tenant.request('GET', '/api/v1/pim/products')).body as { id: string; title: string }[];
    expect(listed).toHaveLength(30);
    const ids = listed.map((p) => p.id);

    const update = await submitJob(tenant, 'BULK_UPDATE', { ids: ids.slice(0, 10), set: { category: 'garden' } });
    expect((await jobEnd(tenant, update.body.id)).job).toMatchObject({ status: 'COMPLETED', processed_items: 10 });
    expect((await productOf(tenant, ids[0] as string)).body.category).toBe('garden');
    expect((await productOf(tenant, ids[20] as string)).body.category).toBeNull();

    const perItem = await submitJob(tenant, 'BULK_UPDATE', [{ id: ids[11], title: 'Renamed' }]);
    expect((await jobEnd(tenant, perItem.body.id)).job.status).toBe('COMPLETED');
    expect((await productOf(tenant, ids[11] as string)).body.title).toBe('Renamed');

    const removal = await submitJob(tenant, 'BULK_DELETE', [ids[0], { id: ids[1] }]);
    expect((await jobEnd(tenant, removal.body.id)).job).toMatchObject({ status: 'COMPLETED', total_items: 2, processed_items: 2 });
    expect((await productOf(tenant, ids[0] as string)).status).toBe(404);
    expect((await productOf(tenant, ids[1] as string)).status).toBe(404);
    expect((await tenant.request('GET', '/api/v1/pim/stats')).body.total_products).toBe(28);
    const audit = (await tenant.request('GET', '/api/v1/pim/audit')).body as { action: string; actor_email: string | null }[];
    expect(audit.filter((a) => a.action === 'product.deleted')).toHaveLength(2);
    expect(audit[0]?.actor_email).toBe(tenant.email);
  });

  it('completes a 5 000-item import with exactly 5 000 products, its processed_items growing while it runs', async () => {
    const tenant = await ctx.newTenant();
    const submitted = await submitJob(tenant, 'BULK_IMPORT', products(5_000, 'Bulk'));
    const { job, seen } = await jobEnd(tenant, submitted.body.id);
    expect(job).toMatchObject({ status: 'COMPLETED', total_items: 5_000, processed_items: 5_000 });
    const running = seen.filter((j) => j.status === 'PROCESSING').map((j) => j.processed_items ?? 0);
    expect(running.some((n) => n > 0 && n < 5_000)).toBe(true);
    expect(running).toEqual([...running].sort((a, b) => a - b));
    // The catalog's read model is another projection than the job's: it counts the last items a moment later.
    const stats = await eventually(
      () => tenant.request('GET', '/api/v1/pim/stats'),
      (r) => r.body.total_products >= 5_000,
    );
    expect(stats.body.total_products).toBe(5_000);
  });

  it('takes more than 100 000 items as 413 (and a body beyond the other routes’ 1 MB limit as a job)', async () => {
    const tenant = await ctx.newTenant();
    const tooMany = await submitJob(
      tenant,
      'BULK_DELETE',
      Array.from({ length: 100_001 }, () => randomUUID()),
    );
    expect(tooMany.status).toBe(413);
    expect((tooMany.body as unknown as { error: { code: string } }).error.code).toBe('payload_too_large');
    expect((await tenant.request('GET', '/api/v1/pim/bulk-jobs?type=BULK_DELETE')).body).toEqual([]);
    // Ids that are no UUIDs fail without a command each: the job is quick, and its body is over 1 MB.
    const large = await submitJob(
      tenant,
      'BULK_DELETE',
      Array.from({ length: 30_000 }, (_, i) => `not-a-product-id-${i}-${'x'.repeat(20)}`),
    );
    expect(large.status).toBe(200);
    const { job } = await jobEnd(tenant, large.body.id);
    expect(job).toMatchObject({ status: 'FAILED', processed_items: 0, failed_items: 30_000 });
    expect(job.errors).toHaveLength(1_000);
  });

  it('lists failed items on the job and as validation issues, and ends the job FAILED', async () => {
    const tenant = await ctx.newTenant();
    const other = await ctx.newTenant();
    const { body: foreign } = await other.request('POST', '/api/v1/pim/products', { title: 'Not yours' });
    const { body: mine } = await tenant.request('POST', '/api/v1/pim/products', { title: 'Mine' });
    const imported = await submitJob(tenant, 'BULK_IMPORT', [
      { title: 'Good' },
      { sku: 'no-title' },
      { title: 'x', colour: 'red' },
      { title: 'Fine' },
    ]);
    const { job } = await jobEnd(tenant, imported.body.id);
    expect(job).toMatchObject({ status: 'FAILED', total_items: 4, processed_items: 2, failed_items: 2 });
    expect(job.errors?.map((e) => [e.item_index, e.code])).toEqual([
      [1, 'MISSING_TITLE'],
      [2, 'INVALID_FIELD'],
    ]);

    const updated = await submitJob(tenant, 'BULK_UPDATE', [
      { id: mine.id, title: 'Mine, renamed' },
      { id: foreign.id, title: 'Taken over' },
      { id: randomUUID(), title: 'Nobody' },
      { id: mine.id, title: '' },
    ]);
    const end = (await jobEnd(tenant, updated.body.id)).job;
    expect(end).toMatchObject({ status: 'FAILED', processed_items: 1, failed_items: 3 });
    expect(end.errors?.map((e) => e.code)).toEqual(['PRODUCT_NOT_FOUND', 'PRODUCT_NOT_FOUND', 'INVALID_FIELD']);
    expect((await productOf(other, foreign.id)).body.title).toBe('Not yours');
    const removal = await submitJob(tenant, 'BULK_DELETE', { ids: [foreign.id] });
    expect((await jobEnd(tenant, removal.body.id)).job.errors?.map((e) => e.code)).toEqual(['PRODUCT_NOT_FOUND']);
    expect((await productOf(other, foreign.id)).status).toBe(200);

    const issues = async () =>
      ((await tenant.request('GET', '/api/v1/pim/validation')).body as Issue[]).filter((i) => i.issue_type === 'BULK_ITEM_FAILED');
    let bulkIssues: Issue[] = [];
    for (const until = Date.now() + 20_000; Date.now() < until && bulkIssues.length < 5;) bulkIssues = await issues();
    expect(bulkIssues.map((i) => [i.bulk_job_id, i.item_index]).sort()).toEqual(
      [
        [imported.body.id, 1],
        [imported.body.id, 2],
        [updated.body.id, 1],
        [updated.body.id, 2],
        [updated.body.id, 3],
        [removal.body.id, 0],
      ].sort(),
    );
    expect(bulkIssues.every((i) => i.severity === 'ERROR')).toBe(true);
    const otherIssues = (await other.request('GET', '/api/v1/pim/validation')).body as Issue[];
    expect(otherIssues.filter((i) => i.issue_type === 'BULK_ITEM_FAILED')).toEqual([]);
  });

  it.each([
    ['a string that is not JSON', 'BULK_IMPORT', '[{"title": "x"'],
    ['an empty array', 'BULK_IMPORT', []],
    ['an empty string payload', 'BULK_IMPORT', '[]'],
    ['an import of non-objects', 'BULK_IMPORT', [1, 2]],
    ['an update item without an id', 'BULK_UPDATE', [{ title: 'x' }]],
    ['an update object without a field set', 'BULK_UPDATE', { ids: [randomUUID()] }],
    ['a delete of numbers', 'BULK_DELETE', [1]],
    ['a delete object with extra keys', 'BULK_DELETE', { ids: [randomUUID()], set: {} }],
    ['a null payload', 'BULK_IMPORT', null],
    ['a number', 'BULK_IMPORT', 7],
  ])('refuses %s with 400 and makes no job', async (_what, jobType, payload) => {
    const tenant = await ctx.newTenant();
    const response = await submitJob(tenant, jobType, payload);
    expect(response.status).toBe(400);
    expect((response.body as unknown as { error: { code: string } }).error.code).toBe('validation_failed');
    expect((await tenant.request('GET', `/api/v1/pim/bulk-jobs?type=${jobType}`)).body).toEqual([]);
  });

  it('refuses an unknown job type and a missing payload with 400', async () => {
    const tenant = ctx.tenant;
    expect((await submitJob(tenant, 'BULK_MERGE', [{ title: 'x' }])).status).toBe(400);
    expect((await tenant.request('POST', '/api/v1/pim/bulk-jobs', { job_type: 'BULK_IMPORT' })).status).toBe(400);
  });

  it('lists jobs of one type (BULK_UPDATE by default), newest first, and only the tenant’s own', async () => {
    const tenant = await ctx.newTenant();
    const other = await ctx.newTenant();
    const first = await submitJob(tenant, 'BULK_IMPORT', [{ title: 'a' }]);
    const second = await submitJob(tenant, 'BULK_IMPORT', [{ title: 'b' }]);
    const update = await submitJob(tenant, 'BULK_UPDATE', { ids: [randomUUID()], set: { brand: 'x' } });
    await submitJob(other, 'BULK_IMPORT', [{ title: 'c' }]);
    const imports = (await tenant.request('GET', '/api/v1/pim/bulk-jobs?type=BULK_IMPORT')).body as { id: string }[];
    expect(imports.map((j) => j.id)).toEqual([second.body.id, first.body.id]);
    const byDefault = (await tenant.request('GET', '/api/v1/pim/bulk-jobs')).body as { id: string }[];
    expect(byDefault.map((j) => j.id)).toEqual([update.body.id]);
    expect((await other.request('GET', `/api/v1/pim/bulk-jobs/${first.body.id}`)).status).toBe(404);
    expect((await tenant.request('GET', '/api/v1/pim/bulk-jobs?type=OTHER')).status).toBe(400);
  });
});
