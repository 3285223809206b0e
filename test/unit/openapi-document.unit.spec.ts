import { describe, expect, it } from 'vitest';
import { finishOpenapiDocument, type OpenapiDocument } from '../../http/openapi-document.ts';
import { uncompilableSchemas } from '../support/openapi-ajv.ts';

const uuid = { type: 'string', format: 'uuid' };
const tenantHeader = { in: 'header', name: 'x-tenant-id', required: true, schema: uuid };
const orgHeader = { in: 'header', name: 'x-org-id', required: true, schema: uuid };
const ok = (ref: string) => ({
  '200': { description: 'ok', content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } },
});

const generated = (): OpenapiDocument => ({
  openapi: '3.0.3',
  security: [{ bearer: [] }],
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    schemas: {
      Order: { type: 'object', properties: { lines: { type: 'array', items: { $ref: '#/components/schemas/OrderLine' } } } },
      OrderLine: { type: 'object' },
      OrderInput: { type: 'object' },
      Unused: { type: 'object' },
      Error: { type: 'object', properties: { error: { type: 'object' } } },
    },
  },
  paths: {
    '/orders/{orderID}': {
      get: { parameters: [{ in: 'path', name: 'orderID', required: true, schema: uuid }, tenantHeader, orgHeader], responses: ok('Order') },
    },
    '/products/{product_id}/variants': {
      get: { parameters: [{ in: 'path', name: 'product_id', required: true, schema: uuid }, tenantHeader, orgHeader], responses: {} },
    },
    '/tenant-only': { get: { parameters: [tenantHeader], responses: {} } },
    '/explicit': { post: { security: [{ bearer: [] }], parameters: [tenantHeader, orgHeader], responses: {} } },
    '/public': { post: { security: [], parameters: [{ in: 'header', name: 'x-signature', required: true }], responses: {} } },
  },
});

describe('the finished OpenAPI document', () => {
  const document = finishOpenapiDocument(generated()) as any;

  it('names the resource’s own id {id} and keeps a parent’s {<parent>_id}, in the path and its parameters', () => {
    expect(Object.keys(document.paths)).toEqual([
      '/orders/{id}',
      '/products/{product_id}/variants',
      '/tenant-only',
      '/explicit',
      '/public',
    ]);
    expect(document.paths['/orders/{id}'].get.parameters).toEqual([{ in: 'path', name: 'id', required: true, schema: uuid }]);
    expect(document.paths['/products/{product_id}/variants'].get.parameters.map((p: any) => p.name)).toEqual(['product_id']);
  });

  it('asks for the tenant and org headers once, as security schemes beside the bearer token', () => {
    expect(document.security).toEqual([{ bearer: [], tenantId: [], orgId: [] }]);
    expect(document.components.securitySchemes).toEqual({
      bearer: { type: 'http', scheme: 'bearer' },
      tenantId: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Tenant-ID' }),
      orgId: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Org-ID' }),
    });
    expect(document.paths['/orders/{id}'].get.security).toBeUndefined();
    expect(document.paths['/products/{product_id}/variants'].get.parameters).toHaveLength(1);
    expect(document.paths['/tenant-only'].get).toEqual({ security: [{ bearer: [], tenantId: [] }], responses: expect.anything() });
    expect(document.paths['/explicit'].post).toEqual({ security: [{ bearer: [], tenantId: [], orgId: [] }], responses: expect.anything() });
    expect(document.paths['/public'].post.security).toEqual([]);
    expect(document.paths['/public'].post.parameters).toHaveLength(1);
  });

  it('keeps the component schemas the paths refer to, directly or through another', () => {
    expect(Object.keys(document.components.schemas).sort()).toEqual(['Error', 'Order', 'OrderLine']);
  });

  it('describes a response by its status where the route did not', () => {
    const described = generated();
    described.paths = { '/x': { get: { responses: { '404': { description: 'Default Response' }, '200': { description: 'The thing' } } } } };
    expect((finishOpenapiDocument(described) as any).paths['/x'].get.responses).toMatchObject({
      '404': { description: 'Not Found' },
      '200': { description: 'The thing' },
    });
  });

  it('leaves the generated document as it was', () => {
    const before = generated();
    finishOpenapiDocument(before);
    expect(before).toEqual(generated());
  });

  it('refuses a rename that would make two paths one', () => {
    const clash = generated();
    clash.paths = { '/orders/{orderID}': {}, '/orders/{id}': {} };
    expect(() => finishOpenapiDocument(clash)).toThrow(/both become/);
  });
});

describe('the finished document, as strict OpenAPI tooling reads it', () => {
  const error = { $ref: '#/components/schemas/Error' };
  const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
  /** What the type provider generates for the faults a validating proxy found: zod's 3.0 output, as it was served. */
  const faulty = (): OpenapiDocument => ({
    openapi: '3.0.3',
    components: {
      schemas: {
        Error: { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] },
        Brand: { type: 'object', properties: { name: { type: 'string' } } },
      },
    },
    paths: {
      '/things/{id}': {
        put: {
          parameters: [{ in: 'path', name: 'id', required: true, schema: { type: 'string' } }],
          requestBody: json({
            type: 'object',
            properties: {
              price: { nullable: true, anyOf: [{ type: 'number' }, { type: 'string', pattern: '^\\d+$' }] },
              brand: { nullable: true, allOf: [{ $ref: '#/components/schemas/Brand' }], description: 'the brand' },
            },
          }),
          responses: { '200': { description: 'OK', ...json({ type: 'object' }) }, '404': { description: 'Not Found', ...json(error) } },
        },
        delete: {
          parameters: [{ in: 'path', name: 'id', required: true, schema: { type: 'string' } }],
          responses: { '204': { description: 'No Content', ...json({ type: 'string', nullable: true, enum: [null] }) } },
        },
      },
      '/feed': {
        get: {
          responses: {
            '302': {
              description: 'Found',
              headers: { location: { schema: { type: 'string', format: 'uri' } } },
              ...json({ type: 'string', nullable: true, enum: [null], description: 'Found' }),
            },
          },
        },
      },
      '/hook': { post: { security: [], responses: { '200': { description: 'OK' } } } },
    },
  });
  const finished = finishOpenapiDocument(faulty()) as any;

  it('compiles every schema under strict Ajv, where the generated document did not', () => {
    expect(uncompilableSchemas(faulty() as any).map(({ where }) => where)).toEqual([
      'PUT /things/{id} request application/json', // nullable without a type
      'DELETE /things/{id} 204 application/json (converted)', // enum [null, null]
      'GET /feed 302 application/json (converted)',
    ]);
    expect(uncompilableSchemas(finished)).toEqual([]);
  });

  it('puts nullable beside a type: on the first typed branch of a union, on a copy of a referenced component', () => {
    const { price, brand } = finished.paths['/things/{id}'].put.requestBody.content['application/json'].schema.properties;
    expect(price).toEqual({
      anyOf: [
        { type: 'number', nullable: true },
        { type: 'string', pattern: '^\\d+$' },
      ],
    });
    expect(brand).toEqual({ type: 'object', properties: { name: { type: 'string' } }, nullable: true, description: 'the brand' });
  });

  it('declares no content for a 204 and a redirect, and the redirect’s Location as required', () => {
    expect(finished.paths['/things/{id}'].delete.responses['204']).toEqual({ description: 'No Content' });
    expect(finished.paths['/feed'].get.responses['302']).toEqual({
      description: 'Found',
      headers: { location: { schema: { type: 'string', format: 'uri' }, required: true, description: 'Where the resource is' } },
    });
  });

  it('declares what the edge answers before any handler, with the error body, in status order', () => {
    const statuses = (path: string, method: string) => Object.keys(finished.paths[path][method].responses);
    // A body is read for PUT and DELETE (413, 415), a path parameter may be too long (414), a token is required (401,
    // 403) and so the tenant's rate limits apply (429).
    expect(statuses('/things/{id}', 'put')).toEqual(['200', '400', '401', '403', '404', '413', '414', '415', '429', '503']);
    expect(statuses('/things/{id}', 'delete')).toEqual(['204', '400', '401', '403', '413', '414', '415', '429', '503']);
    expect(statuses('/feed', 'get')).toEqual(['302', '400', '401', '403', '429', '503']);
    expect(statuses('/hook', 'post')).toEqual(['200', '400', '413', '415', '503']); // public: no 401 or 403 of the edge's
    expect(finished.paths['/things/{id}'].put.responses['413']).toEqual({ description: 'Payload Too Large', ...json(error) });
    expect(Object.keys(finished.paths['/feed'].get.responses['429'].headers)).toEqual([
      'Retry-After',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'RateLimit-Policy',
    ]);
  });

  it('refuses a nullable it cannot give a type', () => {
    const untyped = faulty();
    untyped.paths!['/feed']!.get = { responses: { '200': { description: 'OK', ...json({ nullable: true, anyOf: [{ not: {} }] }) } } };
    expect(() => finishOpenapiDocument(untyped)).toThrow(/nullable without a type/);
  });
});
