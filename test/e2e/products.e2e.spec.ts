import { describe, expect, it } from 'vitest';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('products', () => {
  it('creates a product and reads it back at once', async () => {
    const created = await ctx.tenant.request('POST', '/api/v1/pim/products', {
      title: 'Espresso cup',
      description: 'Porcelain, 90 ml',
      category: 'kitchen',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      org_id: ctx.tenant.orgId,
      tenant_id: ctx.tenant.tenantId,
      title: 'Espresso cup',
      description: 'Porcelain, 90 ml',
      category: 'kitchen',
      status: 'ACTIVE',
    });
    expect(created.body.id).toMatch(uuidPattern);
    expect(created.body.created_at).toBe(created.body.updated_at);

    const read = await ctx.tenant.request('GET', `/api/v1/pim/products/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);

    const list = await ctx.tenant.request('GET', '/api/v1/pim/products');
    expect(list.status).toBe(200);
    expect(list.body.map((p: { id: string }) => p.id)).toContain(created.body.id);
  });

  it('updates only what is sent, clears with null, and moves updated_at only on a real change', async () => {
    const { body: product } = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Tea pot', description: 'Cast iron' });
    await new Promise((r) => setTimeout(r, 5));
    const updated = await ctx.tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { title: 'Tea pot 1 l', description: null });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id: product.id,
      title: 'Tea pot 1 l',
      description: null,
      category: null,
      created_at: product.created_at,
    });
    expect(Date.parse(updated.body.updated_at)).toBeGreaterThan(Date.parse(product.updated_at));

    const read = await ctx.tenant.request('GET', `/api/v1/pim/products/${product.id}`);
    expect(read.body).toEqual(updated.body);

    const unchanged = await ctx.tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { title: 'Tea pot 1 l' });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.updated_at).toBe(updated.body.updated_at);
  });

  it('deletes a product permanently with 204, then 404 everywhere', async () => {
    const { body: product } = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Short-lived' });
    await ctx.tenant.request('POST', `/api/v1/pim/products/${product.id}/variants`, { sku: 'SL-1', price: 1 });
    const deleted = await ctx.tenant.request('DELETE', `/api/v1/pim/products/${product.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeNull();
    expect((await ctx.tenant.request('GET', `/api/v1/pim/products/${product.id}`)).status).toBe(404);
    expect((await ctx.tenant.request('DELETE', `/api/v1/pim/products/${product.id}`)).status).toBe(404);
    expect((await ctx.tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { title: 'Back' })).status).toBe(404);
    expect((await ctx.tenant.request('POST', `/api/v1/pim/products/${product.id}/variants`, { sku: 'SL-2' })).status).toBe(404);
    const list = await ctx.tenant.request('GET', '/api/v1/pim/products');
    expect(list.body.map((p: { id: string }) => p.id)).not.toContain(product.id);
  });

  it('adds variants with exact decimal prices', async () => {
    const { body: product } = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Mug' });
    const cases: [unknown, string][] = [
      [19.99, '19.99'],
      [0.1, '0.10'],
      [5, '5.00'],
      ['0.125', '0.125'],
      [1234567.89, '1234567.89'],
    ];
    const created = [];
    for (const [price, expected] of cases) {
      const variant = await ctx.tenant.request('POST', `/api/v1/pim/products/${product.id}/variants`, {
        sku: `MUG-${expected}`,
        price,
        currency: 'eur',
      });
      expect(variant.status).toBe(201);
      expect(variant.body).toMatchObject({
        product_id: product.id,
        sku: `MUG-${expected}`,
        price: expected,
        currency: 'EUR',
        barcode: null,
      });
      expect(variant.body.id).toMatch(uuidPattern);
      created.push(variant.body);
    }
    const bare = await ctx.tenant.request('POST', `/api/v1/pim/products/${product.id}/variants`, {});
    expect(bare.status).toBe(201);
    expect(bare.body).toMatchObject({ sku: null, price: null, currency: null });

    const list = await ctx.tenant.request('GET', `/api/v1/pim/products/${product.id}/variants`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([...created, bare.body]);
  });

  it('keeps every one of 50 concurrent creates', async () => {
    const crowd = await ctx.newTenant();
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => crowd.request('POST', '/api/v1/pim/products', { title: `Concurrent ${i}` })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(201));
    const list = await crowd.request('GET', '/api/v1/pim/products');
    expect(list.body).toHaveLength(50);
    expect(new Set(list.body.map((p: { id: string }) => p.id))).toEqual(new Set(responses.map((r) => r.body.id)));
    const titles = list.body.map((p: { title: string }) => p.title).sort();
    expect(titles).toEqual(Array.from({ length: 50 }, (_, i) => `Concurrent ${i}`).sort());
  });

  it('lists at most 100 products, most recently created first', async () => {
    const big = await ctx.newTenant();
    for (let wave = 0; wave < 7; wave++) {
      await Promise.all(Array.from({ length: 15 }, (_, i) => big.request('POST', '/api/v1/pim/products', { title: `P${wave * 15 + i}` })));
    }
    const list = await big.request('GET', '/api/v1/pim/products');
    expect(list.body).toHaveLength(100);
    const times = list.body.map((p: { created_at: string }) => Date.parse(p.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const stats = await big.request('GET', '/api/v1/pim/stats');
    expect(stats.body.total_products).toBe(105);
  });

  it('counts the catalog from the read models', async () => {
    const counted = await ctx.newTenant();
    const empty = await counted.request('GET', '/api/v1/pim/stats');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({
      total_products: 0,
      active_products: 0,
      total_variants: 0,
      total_brands: 0,
      total_categories: 0,
      total_attributes: 0,
      validation_issues: 0,
    });
    const { body: a } = await counted.request('POST', '/api/v1/pim/products', { title: 'A' });
    const { body: b } = await counted.request('POST', '/api/v1/pim/products', { title: 'B' });
    await counted.request('POST', `/api/v1/pim/products/${a.id}/variants`, { sku: 'A-1' });
    await counted.request('POST', `/api/v1/pim/products/${a.id}/variants`, { sku: 'A-2' });
    await counted.request('POST', `/api/v1/pim/products/${b.id}/variants`, { sku: 'B-1' });
    await counted.request('DELETE', `/api/v1/pim/products/${b.id}`);
    const stats = await counted.request('GET', '/api/v1/pim/stats');
    expect(stats.body).toMatchObject({ total_products: 1, active_products: 1, total_variants: 2 });
  });

  it('keeps an audit trail of who changed what, newest first', async () => {
    const audited = await ctx.newTenant({ email: 'auditor@example.com' });
    const { body: product } = await audited.request('POST', '/api/v1/pim/products', { title: 'Audited', category: 'x' });
    const { body: variant } = await audited.request('POST', `/api/v1/pim/products/${product.id}/variants`, {
      sku: 'AU-1',
      price: 2.5,
      currency: 'USD',
    });
    await audited.request('PUT', `/api/v1/pim/products/${product.id}`, { title: 'Audited again' });
    await audited.request('DELETE', `/api/v1/pim/products/${product.id}`);

    const audit = await audited.request('GET', '/api/v1/pim/audit');
    expect(audit.status).toBe(200);
    expect(audit.body.map((e: { action: string }) => e.action)).toEqual([
      'product.deleted',
      'product.updated',
      'variant.created',
      'product.created',
    ]);
    for (const entry of audit.body) {
      expect(entry).toMatchObject({
        tenant_id: audited.tenantId,
        org_id: audited.orgId,
        actor_email: 'auditor@example.com',
        ip_address: '127.0.0.1',
      });
      expect(entry.id).toMatch(uuidPattern);
    }
    const [deleted, updated, variantCreated, created] = audit.body;
    expect(created).toMatchObject({
      entity_type: 'product',
      entity_id: product.id,
      details: { title: 'Audited', category: 'x', status: 'ACTIVE' },
    });
    expect(variantCreated).toMatchObject({
      entity_type: 'variant',
      entity_id: variant.id,
      details: { product_id: product.id, sku: 'AU-1', price: '2.50' },
    });
    expect(updated).toMatchObject({ entity_type: 'product', details: { changes: { title: { from: 'Audited', to: 'Audited again' } } } });
    expect(deleted).toMatchObject({ entity_type: 'product', details: { variant_ids: [variant.id] } });
  });

  it('serves its OpenAPI document', async () => {
    const response = await fetch(`${ctx.service.baseUrl}/openapi.json`);
    expect(response.status).toBe(200);
    const document = await response.json();
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/pim/products',
        '/api/v1/pim/products/{id}',
        '/api/v1/pim/products/{product_id}/variants',
        '/api/v1/pim/stats',
        '/api/v1/pim/audit',
      ]),
    );
    expect((await fetch(`${ctx.service.baseUrl}/docs`)).status).toBe(200);
  });
});
