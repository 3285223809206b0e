import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { send, type ApiResponse, type Tenant } from '../support/client.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

const expectError = (response: ApiResponse, status: number, code: string, path?: string) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error.code).toBe(code);
  if (path) expect(response.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
};

const newProduct = async (who: Tenant, body: Record<string, unknown> = {}) =>
  (await who.request('POST', '/api/v1/pim/products', { title: 'With media', ...body })).body;

describe('media', () => {
  it('attaches media to a product and its variants, and lists them filtered, by sort_order', async () => {
    const product = await newProduct(ctx.tenant);
    const { body: variant } = await ctx.tenant.request('POST', `/api/v1/pim/products/${product.id}/variants`, { sku: 'M-1' });
    const second = await ctx.tenant.request('POST', '/api/v1/pim/media', {
      url: 'https://cdn.example.com/b.jpg',
      product_id: product.id,
      sort_order: 2,
    });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({
      tenant_id: ctx.tenant.tenantId,
      org_id: ctx.tenant.orgId,
      product_id: product.id,
      variant_id: null,
      url: 'https://cdn.example.com/b.jpg',
      alt_text: null,
      sort_order: 2,
    });
    expect(second.body.created_at).toBe(second.body.updated_at);
    const first = await ctx.tenant.request('POST', '/api/v1/pim/media', {
      url: 'http://cdn.example.com/a.jpg',
      product_id: product.id,
      alt_text: 'Front',
      sort_order: 1,
    });
    // Only a variant: its product is found for it.
    const ofVariant = await ctx.tenant.request('POST', '/api/v1/pim/media', {
      url: 'https://cdn.example.com/v.jpg',
      variant_id: variant.id,
    });
    expect(ofVariant.body).toMatchObject({ product_id: product.id, variant_id: variant.id, sort_order: 0 });

    const all = await ctx.tenant.request('GET', `/api/v1/pim/media?product_id=${product.id}`);
    expect(all.status).toBe(200);
    expect(all.body).toEqual([ofVariant.body, first.body, second.body]);
    expect((await ctx.tenant.request('GET', `/api/v1/pim/media?variant_id=${variant.id}`)).body).toEqual([ofVariant.body]);
    expect((await ctx.tenant.request('GET', `/api/v1/pim/media?product_id=${product.id}&variant_id=${variant.id}`)).body).toEqual([
      ofVariant.body,
    ]);
    expect((await ctx.tenant.request('GET', `/api/v1/pim/media?product_id=${randomUUID()}`)).body).toEqual([]);

    const audit = (await ctx.tenant.request('GET', '/api/v1/pim/audit')).body;
    expect(audit[0]).toMatchObject({
      action: 'media.created',
      entity_type: 'media',
      entity_id: ofVariant.body.id,
      details: { product_id: product.id, variant_id: variant.id },
    });

    // Deleting the product takes its media with it.
    await ctx.tenant.request('DELETE', `/api/v1/pim/products/${product.id}`);
    expect((await ctx.tenant.request('GET', `/api/v1/pim/media?product_id=${product.id}`)).body).toEqual([]);
  });

  it('refuses bad URLs, missing owners and products or variants that do not exist in the tenant', async () => {
    const product = await newProduct(ctx.tenant);
    const other = await newProduct(ctx.tenant);
    const { body: otherVariant } = await ctx.tenant.request('POST', `/api/v1/pim/products/${other.id}/variants`, { sku: 'O-1' });
    for (const url of ['not a url', '/relative/path.png', 'ftp://example.com/a.png', 'javascript:alert(1)']) {
      expectError(
        await ctx.tenant.request('POST', '/api/v1/pim/media', { url, product_id: product.id }),
        400,
        'validation_failed',
        'body.url',
      );
    }
    expectError(
      await ctx.tenant.request('POST', '/api/v1/pim/media', { url: 'https://x.example/a.png' }),
      400,
      'validation_failed',
      'body.product_id',
    );
    expectError(
      await ctx.tenant.request('POST', '/api/v1/pim/media', { url: 'https://x.example/a.png', product_id: product.id, sort_order: 1.5 }),
      400,
      'validation_failed',
      'body.sort_order',
    );
    expectError(await ctx.tenant.request('GET', '/api/v1/pim/media?product_id=nope'), 400, 'validation_failed');
    expectError(
      await ctx.tenant.request('POST', '/api/v1/pim/media', { url: 'https://x.example/a.png', product_id: randomUUID() }),
      404,
      'not_found',
    );
    expectError(
      await ctx.tenant.request('POST', '/api/v1/pim/media', { url: 'https://x.example/a.png', variant_id: randomUUID() }),
      404,
      'not_found',
      'body.variant_id',
    );
    expectError(
      await ctx.tenant.request('POST', '/api/v1/pim/media', {
        url: 'https://x.example/a.png',
        product_id: product.id,
        variant_id: otherVariant.id,
      }),
      404,
      'not_found',
      'body.variant_id',
    );
    expectError(await send(ctx.service.baseUrl, 'GET', '/api/v1/pim/media'), 401, 'unauthorized');
    expect((await ctx.tenant.request('GET', `/api/v1/pim/media?product_id=${product.id}`)).body).toEqual([]);
  });

  it("never attaches to or shows another tenant's products", async () => {
    const product = await newProduct(ctx.tenant);
    const { body: variant } = await ctx.tenant.request('POST', `/api/v1/pim/products/${product.id}/variants`, { sku: 'T-1' });
    await ctx.tenant.request('POST', '/api/v1/pim/media', { url: 'https://cdn.example.com/t.jpg', product_id: product.id });
    for (const outsider of [await ctx.newTenant(), await ctx.newTenant({ tenantId: ctx.tenant.tenantId })]) {
      expect((await outsider.request('GET', '/api/v1/pim/media')).body).toEqual([]);
      expect((await outsider.request('GET', `/api/v1/pim/media?product_id=${product.id}`)).body).toEqual([]);
      expectError(
        await outsider.request('POST', '/api/v1/pim/media', { url: 'https://evil.example/x.png', product_id: product.id }),
        404,
        'not_found',
      );
      expectError(
        await outsider.request('POST', '/api/v1/pim/media', { url: 'https://evil.example/x.png', variant_id: variant.id }),
        404,
        'not_found',
      );
    }
  });
});

describe('product PIM fields', () => {
  it('carries sku, brand and a template link, and scores brand, media and the (empty) template requirements', async () => {
    const { body: template } = await ctx.tenant.request('POST', '/api/v1/pim/templates', { name: 'Cup' });
    const created = await ctx.tenant.request('POST', '/api/v1/pim/products', {
      title: 'Cup',
      sku: 'CUP-1',
      brand: 'Acme',
      template_id: template.id,
      description: 'd',
      category: 'c',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ sku: 'CUP-1', brand: 'Acme', template_id: template.id, quality_score: 65 });
    const createdEntry = (await ctx.tenant.request('GET', '/api/v1/pim/audit')).body[0];
    expect(createdEntry).toMatchObject({ action: 'product.created', details: { sku: 'CUP-1', brand: 'Acme', template_id: template.id } });
    await ctx.tenant.request('POST', '/api/v1/pim/media', { url: 'https://cdn.example.com/cup.jpg', product_id: created.body.id });
    expect((await ctx.tenant.request('GET', `/api/v1/pim/products/${created.body.id}`)).body.quality_score).toBe(75);

    const updated = await ctx.tenant.request('PUT', `/api/v1/pim/products/${created.body.id}`, {
      brand: null,
      template_id: null,
      sku: 'CUP-2',
    });
    expect(updated.body).toMatchObject({ sku: 'CUP-2', brand: null, template_id: null, quality_score: 55 });
    const audit = (await ctx.tenant.request('GET', '/api/v1/pim/audit')).body;
    expect(audit[0].details.changes).toEqual({
      sku: { from: 'CUP-1', to: 'CUP-2' },
      brand: { from: 'Acme', to: null },
      template_id: { from: template.id, to: null },
    });

    expectError(
      await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'X', template_id: randomUUID() }),
      404,
      'not_found',
      'body.template_id',
    );
    expectError(
      await ctx.tenant.request('PUT', `/api/v1/pim/products/${created.body.id}`, { template_id: randomUUID() }),
      404,
      'not_found',
      'body.template_id',
    );
    const outsider = await ctx.newTenant();
    expectError(
      await outsider.request('POST', '/api/v1/pim/products', { title: 'X', template_id: template.id }),
      404,
      'not_found',
      'body.template_id',
    );
    expectError(await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'X', sku: '' }), 400, 'validation_failed', 'body.sku');
  });
});
