import SwaggerParser from '@apidevtools/swagger-parser';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { jobEnd, submitJob } from '../support/bulk.ts';
import type { ApiResponse } from '../support/client.ts';
import { send } from '../support/client.ts';
import { responseCounts, takeViolations } from '../support/checked-responses.ts';
import { uncompilableSchemas } from '../support/openapi-ajv.ts';
import { OpenapiContract } from '../support/openapi-contract.ts';
import { orderRequest, stocked } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

let document: any;
beforeAll(async () => {
  const response = await fetch(`${ctx.service.baseUrl}/openapi.json`);
  expect(response.status).toBe(200);
  document = await response.json();
});

const body = (path: string, method = 'post') => document.paths[path][method].requestBody.content['application/json'].schema;

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

  it('compiles, every schema of it, under strict Ajv: as OpenAPI 3.0 spells it and as converters to JSON Schema read it', () => {
    expect(uncompilableSchemas(document)).toEqual([]);
  });

  it('declares no content for a 204 or a redirect, and a redirect’s Location', () => {
    const bodiless = operations().flatMap(({ path, method, operation }) =>
      Object.entries<any>(operation.responses)
        .filter(([status]) => status === '204' || status.startsWith('3'))
        .map(([status, response]) => ({ at: `${method} ${path} ${status}`, response })),
    );
    expect(bodiless.map(({ at }) => at).sort()).toEqual([
      'delete /api/v1/pim/products/{id} 204',
      'get /api/v1/ucp/catalog.json 302',
      'get /api/v1/ucp/product-feed.jsonl 302',
    ]);
    for (const { at, response } of bodiless) {
      expect(response.content, at).toBeUndefined();
      if (at.endsWith('302'))
        expect(response.headers.location, at).toMatchObject({ required: true, schema: { type: 'string', format: 'uri' } });
    }
  });

  it('declares, with the error body, what the edge answers before any handler: 413 and 415 where a body is read, 414 where a path has a parameter', () => {
    for (const { path, method, operation } of operations()) {
      const statuses = Object.keys(operation.responses);
      const expected = ['400', '503'];
      if (method !== 'get') expected.push('413', '415');
      if (path.includes('{')) expected.push('414');
      if (operation.security?.length !== 0) expected.push('401', '403');
      expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(expected));
      for (const status of expected) {
        expect(operation.responses[status].content['application/json'].schema, `${method} ${path} ${status}`).toEqual({
          $ref: '#/components/schemas/Error',
        });
      }
    }
  });

  it('states the rules the service enforces: a closed query, http(s) URLs, payment ids, the feed’s URL template', () => {
    const component = (schema: any) => (schema.$ref ? document.components.schemas[schema.$ref.split('/').pop()] : schema);
    // Unknown query parameters are refused: the query is one closed object, spread over the query string.
    for (const { path, method, operation } of operations().filter(({ path }) => path.startsWith('/api/'))) {
      const query = (operation.parameters ?? []).filter((p: any) => p.in === 'query');
      expect(query, `${method} ${path}`).toMatchObject([
        { style: 'form', explode: true, schema: { type: 'object', additionalProperties: false } },
      ]);
    }
    expect(document.paths['/api/v1/pim/products'].get.parameters[0].schema.properties).toHaveProperty('limit');
    const brand = body('/api/v1/pim/brands', 'post').properties;
    expect(brand.logoUrl).toMatchObject({ format: 'uri', pattern: expect.stringMatching(/^\^\[Hh\]\[Tt\]\[Tt\]\[Pp\]/) });
    expect(body('/api/v1/pim/media', 'post').properties.url).toMatchObject({ format: 'uri', pattern: brand.logoUrl.pattern });
    const order = body('/api/v1/oms/orders', 'post');
    expect(order.anyOf.map((branch: any) => branch.properties.payment_provider.enum[0]).sort()).toEqual([
      'adyen',
      'manual',
      'paypal',
      'stripe',
    ]);
    const template = component(body('/api/v1/ucp/feed-settings', 'put')).properties.product_url_template;
    expect(new RegExp(template.pattern, 'u').test('https://shop.example.com/products/{sku}')).toBe(true);
    expect(new RegExp(template.pattern, 'u').test('https://shop.example.com/products')).toBe(false);
  });

  it('gives the bulk job’s payload a schema per job type', () => {
    const jobs = body('/api/v1/pim/bulk-jobs').oneOf.map((ref: any) => document.components.schemas[ref.$ref.split('/').pop()]);
    expect(jobs.map((job: any) => job.properties.job_type.enum)).toEqual([['BULK_IMPORT'], ['BULK_UPDATE'], ['BULK_DELETE']]);
    for (const job of jobs) expect(job.properties.payload.anyOf).toHaveLength(3); // an array, an object form, the same as JSON text
  });

  it('is shown at /docs', async () => {
    expect((await fetch(`${ctx.service.baseUrl}/docs`)).status).toBe(200);
  });
});

describe('real responses conform to the published schemas', () => {
  /**
   * Every response of the suite is checked against the document (test/support/checked-responses.ts); these tests make
   * sure each operation below is met, and take the check's findings as their own assertion.
   */
  const expectConforms = (response: ApiResponse, method: string, path: string, status: number) => {
    expect(response.status, `${method.toUpperCase()} ${path}: ${JSON.stringify(response.body)}`).toBe(status);
    expect(takeViolations()).toEqual([]);
  };

  it('checks every response of a started service, and finds what breaks the document', async () => {
    const before = responseCounts();
    await ctx.tenant.request('GET', '/api/v1/pim/products');
    await fetch(`${ctx.service.baseUrl}/health`);
    expect(responseCounts()).toMatchObject({ checked: before.checked + 1, outsideDocument: before.outsideDocument + 1 });
    // The same check, on answers the service never gives.
    const contract = new OpenapiContract(document);
    const json = new Headers({ 'content-type': 'application/json; charset=utf-8' });
    const exchange = { method: 'GET', path: `/api/v1/pim/products/${randomUUID()}`, headers: json };
    expect(contract.check({ ...exchange, status: 404, body: '{"error":{"code":"not_found","message":"no","details":[]}}' })).toEqual({
      operation: 'GET /api/v1/pim/products/{id}',
      problems: [],
    });
    expect(contract.check({ ...exchange, status: 418, body: '{}' })?.problems).toEqual([
      expect.stringMatching(/^status 418 is not declared/),
    ]);
    expect(contract.check({ ...exchange, status: 404, body: '{"message":"no"}' })?.problems).toEqual([
      expect.stringMatching(/^the body does not match the schema: \/ must have required property 'error'/),
    ]);
    const feed = { method: 'GET', path: '/api/v1/ucp/catalog.json', status: 302 };
    expect(contract.check({ ...feed, headers: json, body: 'null' })?.problems).toEqual([
      expect.stringMatching(/^no content is declared/),
      'the required header location is missing',
    ]);
    expect(
      contract.check({ ...feed, headers: new Headers({ location: 'https://cdn.example.com/feed.json' }), body: '' })?.problems,
    ).toEqual([]);
  });

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
