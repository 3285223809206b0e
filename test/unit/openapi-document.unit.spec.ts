import { describe, expect, it } from 'vitest';
import { finishOpenapiDocument, type OpenapiDocument } from '../../http/openapi-document.ts';

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
    expect(document.paths['/tenant-only'].get).toEqual({ security: [{ bearer: [], tenantId: [] }], responses: {} });
    expect(document.paths['/explicit'].post).toEqual({ security: [{ bearer: [], tenantId: [], orgId: [] }], responses: {} });
    expect(document.paths['/public'].post.security).toEqual([]);
    expect(document.paths['/public'].post.parameters).toHaveLength(1);
  });

  it('keeps the component schemas the paths refer to, directly or through another', () => {
    expect(Object.keys(document.components.schemas).sort()).toEqual(['Order', 'OrderLine']);
  });

  it('describes a response by its status where the route did not', () => {
    const described = generated();
    described.paths = { '/x': { get: { responses: { '404': { description: 'Default Response' }, '200': { description: 'The thing' } } } } };
    expect((finishOpenapiDocument(described) as any).paths['/x'].get.responses).toEqual({
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
