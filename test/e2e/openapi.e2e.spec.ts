import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { jobEnd, submitJob } from '../support/bulk.ts';
import type { ApiResponse } from '../support/client.ts';
import { send } from '../support/client.ts';
import { orderRequest, stocked } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

let document: any;
beforeAll(async () => {
  const response = await fetch(`${ctx.service.baseUrl}/openapi.json`);
  expect(response.status).toBe(200);
  document = await response.json();
});

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const operations = (): { path: string; method: string; operation: any }[] =>
  Object.entries<any>(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ path, method, operation: item[method] })),
  );

/** Every `$ref` string anywhere in `value`. */
const refsIn = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.flatMap(refsIn)
    : value !== null && typeof value === 'object'
      ? Object.entries(value).flatMap(([key, child]) => (key === '$ref' && typeof child === 'string' ? [child] : refsIn(child)))
      : [];

const pointer = (root: unknown, ref: string): unknown =>
  ref
    .replace(/^#\//, '')
    .split('/')
    .map((token) => decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<any>((node, token) => (node === undefined || node === null ? undefined : node[token]), root);

describe('the OpenAPI document', () => {
  it('is valid OpenAPI, per a real validator', async () => {
    // swagger-parser dereferences what it validates: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeDefined();
    expect(document.openapi).toMatch(/^3\.0\./);
  });

  it('resolves every $ref to a component schema it carries', () => {
    const refs = refsIn(document);
    expect(refs.length).toBeGreaterThan(100);
    const missing = [...new Set(refs)].filter((ref) => pointer(document, ref) === undefined);
    expect(missing).toEqual([]);
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['Product', 'Variant', 'Order', 'OrderPage', 'BulkJob', 'CreatedBulkJob', 'Error']),
    );
    // Described, not the "string" a dangling reference showed in /docs.
    expect(document.components.schemas.Product).toMatchObject({
      type: 'object',
      properties: expect.objectContaining({ id: expect.anything() }),
    });
    // And nothing that no operation refers to.
    const referenced = new Set(refs.map((ref) => ref.replace('#/components/schemas/', '')));
    expect(Object.keys(document.components.schemas).filter((name) => !referenced.has(name))).toEqual([]);
  });

  it('declares X-Tenant-ID and X-Org-ID once, as security schemes beside the bearer token', () => {
    expect(document.components.securitySchemes).toMatchObject({
      bearer: { type: 'http', scheme: 'bearer' },
      tenantId: { type: 'apiKey', in: 'header', name: 'X-Tenant-ID' },
      orgId: { type: 'apiKey', in: 'header', name: 'X-Org-ID' },
    });
    expect(document.security).toEqual([{ bearer: [], tenantId: [], orgId: [] }]);
    for (const { path, method, operation } of operations()) {
      const headers = (operation.parameters ?? []).filter((p: any) => p.in === 'header').map((p: any) => p.name.toLowerCase());
      expect(headers, `${method} ${path}`).not.toContain('x-tenant-id');
      expect(headers, `${method} ${path}`).not.toContain('x-org-id');
    }
    const products = document.paths['/api/v1/pim/products'].get;
    expect(products.security).toBeUndefined(); // the document's default: all three
    expect(document.paths['/unified/webhook'].post.security).toEqual([]); // public stays public
    expect(document.paths['/unified/oauth/return'].get.security).toEqual([]);
  });

  it('names path parameters one way: {id} for the resource itself, {<parent>_id} for another', () => {
    for (const { path, method, operation } of operations()) {
      const inTemplate = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      for (const name of inTemplate) expect(name, path).toMatch(/^(id|[a-z]+(_[a-z]+)*_id)$/);
      const declared = (operation.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
      expect(declared.sort(), `${method} ${path}`).toEqual([...inTemplate].sort());
    }
    const paths = Object.keys(document.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/api/v1/pim/products/{id}',
        '/api/v1/pim/products/{product_id}/variants',
        '/api/v1/oms/orders/{id}',
        '/api/v1/oms/orders/{id}/status',
        '/api/v1/pim/bulk-jobs/{id}',
        '/api/v1/integrations/connections/{id}',
        '/api/v1/oms/inventory/levels/{variant_id}/{location_id}',
      ]),
    );
    expect(paths.filter((path) => /[A-Z]/.test(path))).toEqual([]);
  });

  it('is shown at /docs', async () => {
    expect((await fetch(`${ctx.service.baseUrl}/docs`)).status).toBe(200);
  });
});

describe('real responses conform to the published schemas', () => {
  let ajv: Ajv;
  const validators = new Map<string, ValidateFunction>();
  beforeAll(() => {
    // OpenAPI 3.0 schemas are a JSON Schema draft-07 dialect with `nullable` (which ajv knows) and a few annotations.
    ajv = new Ajv({ strict: false, allErrors: true });
    ajvFormats.default(ajv); // a CommonJS module: its default export is under `default`
    ajv.addSchema({ ...document, $id: 'openapi.json' });
  });

  /** The response schema the document publishes for this operation and status, as a validator. */
  const validatorFor = (method: string, path: string, status: number): ValidateFunction => {
    const key = `${method} ${path} ${status}`;
    const known = validators.get(key);
    if (known) return known;
    const escaped = path.replaceAll('~', '~0').replaceAll('/', '~1');
    const at = `#/paths/${encodeURIComponent(escaped)}/${method}/responses/${status}/content/application~1json/schema`;
    expect(pointer(document, at), `no ${status} response schema for ${method.toUpperCase()} ${path}`).toBeDefined();
    const validate = ajv.compile({ $ref: `openapi.json${at}` });
    validators.set(key, validate);
    return validate;
  };

  /** `response` had the status `status` and a body valid against the schema published for it. */
  const expectConforms = (response: ApiResponse, method: string, path: string, status: number) => {
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    const validate = validatorFor(method, path, status);
    expect(
      validate(response.body) ? [] : validate.errors,
      `${method.toUpperCase()} ${path} ${status}: ${JSON.stringify(response.body)}`,
    ).toEqual([]);
  };

  it('products and variants', async () => {
    const tenant = ctx.tenant;
    const created = await tenant.request('POST', '/api/v1/pim/products', {
      title: 'Espresso cup',
      category: 'kitchen',
      sku: `CUP-${randomUUID().slice(0, 8)}`,
      description: 'A small cup',
    });
    expectConforms(created, 'post', '/api/v1/pim/products', 201);
    const id: string = created.body.id;
    expectConforms(await tenant.request('GET', `/api/v1/pim/products/${id}`), 'get', '/api/v1/pim/products/{id}', 200);
    expectConforms(await tenant.request('GET', '/api/v1/pim/products'), 'get', '/api/v1/pim/products', 200);
    expectConforms(
      await tenant.request('PUT', `/api/v1/pim/products/${id}`, { title: 'Espresso cup, white' }),
      'put',
      '/api/v1/pim/products/{id}',
      200,
    );
    const variant = await tenant.request('POST', `/api/v1/pim/products/${id}/variants`, { sku: `CUP-W-${randomUUID().slice(0, 8)}` });
    expectConforms(variant, 'post', '/api/v1/pim/products/{product_id}/variants', 201);
    expectConforms(
      await tenant.request('GET', `/api/v1/pim/products/${id}/variants`),
      'get',
      '/api/v1/pim/products/{product_id}/variants',
      200,
    );
  });

  it('orders', async () => {
    const tenant = ctx.tenant;
    const stock = await stocked(tenant, 3);
    const created = await tenant.request(
      'POST',
      '/api/v1/oms/orders',
      orderRequest({
        currency: 'eur',
        customer_id: randomUUID(),
        tags: ['vip'],
        shipping_total: '4.90',
        line_items: [
          {
            name: 'Espresso cup',
            quantity: 2,
            unit_price: '12.50',
            variant_id: stock.variantId,
            location_id: stock.locationId,
            sku: 'CUP-1',
          },
          { name: 'Gift wrap', quantity: 1, unit_price: 0, requires_shipment: false },
        ],
      }),
    );
    expectConforms(created, 'post', '/api/v1/oms/orders', 201);
    const id: string = created.body.id;
    expectConforms(await tenant.request('GET', `/api/v1/oms/orders/${id}`), 'get', '/api/v1/oms/orders/{id}', 200);
    expectConforms(await tenant.request('GET', '/api/v1/oms/orders?limit=5&offset=0'), 'get', '/api/v1/oms/orders', 200);
  });

  it('bulk jobs', async () => {
    const tenant = await ctx.newTenant();
    const submitted = await submitJob(tenant, 'BULK_IMPORT', [
      { title: 'One', sku: `ONE-${randomUUID().slice(0, 8)}` },
      { title: '' }, // refused item: the ended job carries an error
    ]);
    expectConforms(submitted, 'post', '/api/v1/pim/bulk-jobs', submitted.status);
    expect(submitted.status).toBeLessThan(300);
    await jobEnd(tenant, submitted.body.id);
    expectConforms(await tenant.request('GET', `/api/v1/pim/bulk-jobs/${submitted.body.id}`), 'get', '/api/v1/pim/bulk-jobs/{id}', 200);
    expectConforms(await tenant.request('GET', '/api/v1/pim/bulk-jobs'), 'get', '/api/v1/pim/bulk-jobs', 200);
  });

  it('errors', async () => {
    const tenant = ctx.tenant;
    expectConforms(await tenant.request('GET', `/api/v1/pim/products/${randomUUID()}`), 'get', '/api/v1/pim/products/{id}', 404);
    expectConforms(await tenant.request('GET', '/api/v1/pim/products/not-a-uuid'), 'get', '/api/v1/pim/products/{id}', 400);
    expectConforms(await tenant.request('POST', '/api/v1/pim/products', { title: 42 }), 'post', '/api/v1/pim/products', 400);
    expectConforms(await tenant.request('GET', `/api/v1/oms/orders/${randomUUID()}`), 'get', '/api/v1/oms/orders/{id}', 404);
    expectConforms(await send(ctx.service.baseUrl, 'GET', '/api/v1/pim/products'), 'get', '/api/v1/pim/products', 401);
    const elsewhere = { ...tenant.headers, 'x-tenant-id': randomUUID() };
    expectConforms(
      await send(ctx.service.baseUrl, 'GET', '/api/v1/pim/products', { headers: elsewhere }),
      'get',
      '/api/v1/pim/products',
      403,
    );
  });

  it('the rest of the catalog a tenant reads', async () => {
    const tenant = ctx.tenant;
    const category = await tenant.request('POST', '/api/v1/pim/categories', {
      name: 'Kitchen',
      slug: `kitchen-${randomUUID().slice(0, 8)}`,
    });
    expectConforms(category, 'post', '/api/v1/pim/categories', 201);
    expectConforms(await tenant.request('GET', '/api/v1/pim/categories'), 'get', '/api/v1/pim/categories', 200);
    const brand = await tenant.request('POST', '/api/v1/pim/brands', { name: 'Acme', logoUrl: 'https://cdn.example.com/acme.png' });
    expectConforms(brand, 'post', '/api/v1/pim/brands', 201);
    expectConforms(await tenant.request('GET', '/api/v1/pim/stats'), 'get', '/api/v1/pim/stats', 200);
    expectConforms(await tenant.request('GET', '/api/v1/pim/audit'), 'get', '/api/v1/pim/audit', 200);
    expectConforms(await tenant.request('GET', '/api/v1/pim/validation'), 'get', '/api/v1/pim/validation', 200);
  });
});
