import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { productAggregate } from '../../commands/catalog/product.ts';
import { S3PROXY_ACCESS_KEY_ID, S3PROXY_SECRET_ACCESS_KEY } from '../../stack/s3/s3proxy.ts';
import { jobEnd, submitJob } from '../support/bulk.ts';
import type { Tenant } from '../support/client.ts';
import { readEvents } from '../support/event-log.ts';
import { downloadExport, exportEnd, listExports, requestExport } from '../support/exports.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const createProduct = async (tenant: Tenant, body: Record<string, unknown>) => {
  const created = await tenant.request('POST', '/api/v1/pim/products', body);
  expect(created.status).toBe(201);
  return created.body.id as string;
};

const importProducts = async (tenant: Tenant, n: number, prefix: string) => {
  const items = Array.from({ length: n }, (_, i) => ({ title: `${prefix} ${i}`, description: 'd', sku: `${prefix}-${i}-${randomUUID()}` }));
  const { job } = await jobEnd(tenant, (await submitJob(tenant, 'BULK_IMPORT', items)).body.id);
  expect(job.status).toBe('COMPLETED');
};

/** A catalog with one of everything an export must carry, leave out or mark. */
async function seedCatalog(tenant: Tenant) {
  const category = (await tenant.request('POST', '/api/v1/pim/categories', { name: 'Garden', slug: `garden-${randomUUID()}` })).body;
  const brand = (await tenant.request('POST', '/api/v1/pim/brands', { name: 'Acme' })).body;
  const full = await createProduct(tenant, {
    title: 'Hose',
    description: 'A long hose',
    category: category.id,
    brand: 'Acme',
    sku: 'HOSE-1',
  });
  const variant = (
    await tenant.request('POST', `/api/v1/pim/products/${full}/variants`, {
      sku: 'HOSE-1-RED',
      barcode: '4006381333931',
      price: '19.990',
      currency: 'EUR',
    })
  ).body;
  await tenant.request('POST', '/api/v1/pim/media', { product_id: full, url: 'https://img.example.com/b.jpg', sort_order: 2 });
  await tenant.request('POST', '/api/v1/pim/media', {
    product_id: full,
    variant_id: variant.id,
    url: 'https://img.example.com/a.jpg',
    sort_order: 1,
  });
  const draft = await createProduct(tenant, { title: 'Prototype', description: 'Not yet for sale' });
  expect((await tenant.request('PUT', `/api/v1/pim/products/${draft}`, { status: 'DRAFT' })).status).toBe(200);
  const blocked = await createProduct(tenant, { title: 'Broken barcode', description: 'x' });
  await tenant.request('POST', `/api/v1/pim/products/${blocked}/variants`, { sku: 'BAD-1', barcode: '1234567890123' });
  return { category, brand, full, variant, draft, blocked };
}

/** Waits until the product's open ERROR issue is listed (the quality pipeline is asynchronous). */
async function errorIssueOf(tenant: Tenant, productId: string) {
  for (let i = 0; i < 100; i++) {
    const issues = (await tenant.request('GET', '/api/v1/pim/validation')).body as { product_id: string; severity: string }[];
    if (issues.some((issue) => issue.product_id === productId && issue.severity === 'ERROR')) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no ERROR issue for ${productId}`);
}

async function exportedCatalog(tenant: Tenant) {
  const accepted = await requestExport(tenant);
  expect(accepted.status).toBe(202);
  expect(accepted.body).toMatchObject({ status: 'PENDING', export_id: expect.any(String), message: expect.any(String) });
  const { record, seen } = await exportEnd(tenant, accepted.body.export_id);
  expect(record.status, record.error ?? '').toBe('COMPLETED');
  return { record, seen, ...(await downloadExport(record)) };
}

function checksEverything(ctx: ReturnType<typeof useServiceAndTenant>) {
  return async () => {
    const tenant = await ctx.newTenant();
    const seeded = await seedCatalog(tenant);
    await errorIssueOf(tenant, seeded.blocked);
    const { record, manifest, products, taxonomy } = await exportedCatalog(tenant);

    expect(manifest).toMatchObject({ schema_version: 1, export_id: record.id, tenant_id: tenant.tenantId, org_id: tenant.orgId });
    expect(manifest.counts).toEqual({ products: 2, draft_products: 1, excluded_products: 1, taxonomy: 2 });
    expect(manifest.excluded.product_ids).toEqual([seeded.blocked]);
    expect(Object.keys(manifest.position)).toEqual(['catalog', 'validation']);
    expect(record).toMatchObject({ product_count: 2, draft_count: 1, excluded_count: 1 });

    const byId = new Map(products.map((p) => [p.id, p]));
    expect([...byId.keys()].sort()).toEqual([seeded.full, seeded.draft].sort());
    expect(byId.get(seeded.draft)).toMatchObject({ title: 'Prototype', status: 'DRAFT', draft: true });
    const full = byId.get(seeded.full) as Record<string, any>;
    expect(full).toMatchObject({
      title: 'Hose',
      status: 'ACTIVE',
      draft: false,
      sku: 'HOSE-1',
      brand: 'Acme',
      category: seeded.category.id,
    });
    expect(full.variants).toEqual([
      expect.objectContaining({ id: seeded.variant.id, sku: 'HOSE-1-RED', barcode: '4006381333931', price: '19.99', currency: 'EUR' }),
    ]);
    expect(full.media.map((m: { url: string }) => m.url)).toEqual(['https://img.example.com/a.jpg', 'https://img.example.com/b.jpg']);
    expect(taxonomy.map((t) => [t.kind, t.id]).sort()).toEqual(
      [
        ['brand', seeded.brand.id],
        ['category', seeded.category.id],
      ].sort(),
    );
    return { tenant, record };
  };
}

describe('catalog export to the filesystem store', () => {
  const storageDir = mkdtempSync(path.join(tmpdir(), 'export-store-'));
  const ctx = useServiceAndTenant({ env: { STORAGE_DIR: storageDir } });

  it('writes products with variants, media and attributes, DRAFT ones marked, ERROR ones left out and counted, with the taxonomy and a manifest whose checksums match', async () => {
    const { record } = await checksEverything(ctx)();
    // The links are the service's own, signed and time-limited: a changed signature or key is refused.
    const url = new URL(record.download_url as string);
    expect(url.origin).toBe(ctx.service.baseUrl);
    const tampered = new URL(url);
    tampered.searchParams.set('signature', '0'.repeat(64));
    expect((await fetch(tampered)).status).toBe(403);
    const otherKey = new URL(url.toString().replace('products.jsonl.gz', 'taxonomy.jsonl.gz'));
    expect((await fetch(otherKey)).status).toBe(403);
  });

  it('is a snapshot as of one point of the log while products change under it', async () => {
    const tenant = await ctx.newTenant();
    await importProducts(tenant, 1_500, 'Snap');
    const ids = ((await tenant.request('GET', '/api/v1/pim/products?limit=1000')).body as { id: string }[]).map((p) => p.id);
    let writing = true;
    let writes = 0;
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        const id = ids[n % ids.length] as string;
        const [renamed] = await Promise.all([
          tenant.request('PUT', `/api/v1/pim/products/${id}`, { title: `Renamed ${n}` }),
          tenant.request('POST', '/api/v1/pim/products', { title: `Added ${n}`, description: 'd' }),
        ]);
        expect(renamed.status).toBe(200);
        writes++;
      }
    })();
    const accepted = await requestExport(tenant);
    const { record } = await exportEnd(tenant, accepted.body.export_id);
    writing = false;
    await writer;
    expect(record.status).toBe('COMPLETED');
    expect(writes).toBeGreaterThan(0);
    const { manifest, products } = await downloadExport(record);

    // The catalog as the product log says it was at the manifest's position, folded from the events themselves.
    const checkpoints = manifest.position.catalog as Record<string, Record<string, string>>;
    const expected = new Map<string, string>();
    for (const event of await readEvents(ctx.service.namespace, productAggregate.events)) {
      const at = checkpoints[event.position.topic]?.[String(event.position.partition)];
      if (event.envelope.tenantId !== tenant.tenantId || at === undefined || BigInt(event.position.offset) > BigInt(at)) continue;
      const data = event.data as { productId: string; title?: string; changes?: { field: string; current: string }[] };
      if (event.type === 'ProductCreated') expected.set(data.productId, data.title as string);
      if (event.type === 'ProductDeleted') expected.delete(data.productId);
      for (const change of data.changes ?? []) if (change.field === 'title') expected.set(data.productId, change.current);
    }
    const exported = new Map(products.map((p) => [p.id as string, p.title as string]));
    expect(exported.size).toBe(expected.size);
    expect(exported).toEqual(expected);
  });

  it('runs one export at a time per tenant: a request while one waits joins it', async () => {
    const tenant = await ctx.newTenant();
    await importProducts(tenant, 2_000, 'Queue');
    const answers = await Promise.all([requestExport(tenant), requestExport(tenant), requestExport(tenant), requestExport(tenant)]);
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
    const distinct = [...new Set(answers.map((a) => a.body.export_id))];
    // At most one runs and one waits, so four requests made at once are served by two exports at most.
    expect(distinct.length).toBeLessThanOrEqual(2);
    const ended = await Promise.all(distinct.map((id) => exportEnd(tenant, id)));
    expect(ended.every(({ record }) => record.status === 'COMPLETED' && record.product_count === 2_000)).toBe(true);
    expect(ended.reduce((sum, { record }) => sum + record.requests, 0)).toBe(4);
    const records = await listExports(tenant);
    expect(records).toHaveLength(distinct.length);
  });

  it('keeps tenants apart: another tenant lists none of ours and its export holds only its own products', async () => {
    const ours = await ctx.newTenant();
    await createProduct(ours, { title: 'Ours', description: 'x' });
    const { record } = await exportedCatalog(ours);
    const theirs = await ctx.newTenant();
    expect(await listExports(theirs)).toEqual([]);
    await createProduct(theirs, { title: 'Theirs', description: 'y' });
    const exported = await exportedCatalog(theirs);
    expect(exported.products.map((p) => p.title)).toEqual(['Theirs']);
    expect(exported.record.download_url).not.toBe(record.download_url);
  });
});

describe('catalog export to S3 (the local S3-compatible server)', () => {
  const ctx = useServiceAndTenant(() => ({
    env: {
      S3_ENDPOINT: inject('stack').s3Endpoint,
      // The same server by another name, as a client outside a compose network reaches it: links are signed for it.
      S3_PUBLIC_ENDPOINT: inject('stack').s3Endpoint.replace('127.0.0.1', 'localhost'),
      S3_BUCKET: `exports-${randomUUID()}`,
      S3_ACCESS_KEY_ID: S3PROXY_ACCESS_KEY_ID,
      S3_SECRET_ACCESS_KEY: S3PROXY_SECRET_ACCESS_KEY,
    },
  }));

  it('writes the same export there, downloadable through presigned links', async () => {
    const { record } = await checksEverything(ctx)();
    const url = new URL(record.download_url as string);
    expect(url.origin).toBe(inject('stack').s3Endpoint.replace('127.0.0.1', 'localhost'));
    expect(url.searchParams.has('X-Amz-Signature')).toBe(true);
  });
});
