import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTenant, send, type Tenant } from '../support/client.ts';
import { startService, type Service } from '../support/service.ts';

let service: Service;
let tenant: Tenant;
let product: { id: string; title: string; updated_at: string };

beforeAll(async () => {
  service = await startService();
  tenant = await newTenant(service.baseUrl);
  product = (await tenant.request('POST', '/api/v1/pim/products', { title: 'Reference' })).body;
});
afterAll(() => service?.stop());

const expectError = (response: { status: number; body: any }, status: number, code: string) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body).toEqual({ error: { code, message: expect.any(String), details: expect.any(Array) } });
};

describe('bad input gets a clear 4xx and writes nothing', () => {
  it('rejects invalid product bodies with the field that is wrong', async () => {
    const cases: [unknown, string][] = [
      [{}, 'body.title'],
      [{ title: '' }, 'body.title'],
      [{ title: '   ' }, 'body.title'],
      [{ title: 42 }, 'body.title'],
      [{ title: 'x'.repeat(501) }, 'body.title'],
      [{ title: 'ok', description: 7 }, 'body.description'],
      [{ title: 'ok', category: ['a'] }, 'body.category'],
      [{ title: 'ok', colour: 'red' }, 'body'],
      [{ title: 'nul\u0000byte' }, 'body.title'],
      [{ title: 'ok', description: 'a\u0000b' }, 'body.description'],
      [[{ title: 'array' }], 'body'],
      ['just a string', 'body'],
    ];
    for (const [body, path] of cases) {
      const response = await tenant.request('POST', '/api/v1/pim/products', body);
      expectError(response, 400, 'validation_failed');
      expect(response.body.error.details.map((d: { path: string }) => d.path), JSON.stringify(body)).toContain(path);
    }
  });

  it('rejects malformed JSON, wrong media types, empty and oversized bodies', async () => {
    const h = tenant.headers;
    expectError(await send(service.baseUrl, 'POST', '/api/v1/pim/products', { rawBody: '{"title": "unterminated', headers: h }), 400, 'bad_request');
    expectError(await send(service.baseUrl, 'POST', '/api/v1/pim/products', { rawBody: '', headers: h }), 400, 'bad_request');
    expectError(
      await send(service.baseUrl, 'POST', '/api/v1/pim/products', { rawBody: 'title=x', headers: { ...h, 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported_media_type',
    );
    const huge = JSON.stringify({ title: 'big', description: 'x'.repeat(2 * 1024 * 1024) });
    expectError(await send(service.baseUrl, 'POST', '/api/v1/pim/products', { rawBody: huge, headers: h }), 413, 'payload_too_large');
  });

  it('rejects malformed ids in the path and unknown routes', async () => {
    expectError(await tenant.request('GET', '/api/v1/pim/products/not-a-uuid'), 400, 'validation_failed');
    expectError(await tenant.request('PUT', '/api/v1/pim/products/123', { title: 'x' }), 400, 'validation_failed');
    expectError(await tenant.request('DELETE', "/api/v1/pim/products/'%20or%201=1"), 400, 'validation_failed');
    expectError(await tenant.request('POST', '/api/v1/pim/products/zzz/variants', { sku: 'x' }), 400, 'validation_failed');
    expectError(await tenant.request('GET', '/api/v1/pim/products/00000000-0000-4000-8000-000000000000'), 404, 'not_found');
    expectError(await tenant.request('GET', '/api/v1/pim/nowhere'), 404, 'not_found');
  });

  it('rejects invalid variants', async () => {
    const cases: [unknown, string][] = [
      [{ price: -1 }, 'body.price'],
      [{ price: 'abc' }, 'body.price'],
      [{ price: '1e5' }, 'body.price'],
      [{ price: 0.1234567 }, 'body.price'],
      [{ price: 1e13 }, 'body.price'],
      [{ currency: 'US' }, 'body.currency'],
      [{ currency: 'EURO' }, 'body.currency'],
      [{ sku: 12 }, 'body.sku'],
      [{ barcode: 'x'.repeat(65) }, 'body.barcode'],
      [{ sku: 'A\u0000' }, 'body.sku'],
      [{ size: 'XL' }, 'body'],
    ];
    for (const [body, path] of cases) {
      const response = await tenant.request('POST', `/api/v1/pim/products/${product.id}/variants`, body);
      expectError(response, 400, 'validation_failed');
      expect(response.body.error.details.map((d: { path: string }) => d.path), JSON.stringify(body)).toContain(path);
    }
  });

  it('rejects invalid updates and leaves the product as it was', async () => {
    for (const body of [{ title: '' }, { title: null }, { status: 'DRAFT' }, { description: 5 }]) {
      expectError(await tenant.request('PUT', `/api/v1/pim/products/${product.id}`, body), 400, 'validation_failed');
    }
    const read = await tenant.request('GET', `/api/v1/pim/products/${product.id}`);
    expect(read.body).toMatchObject({ title: 'Reference', updated_at: product.updated_at });
  });

  it('wrote nothing for any of it', async () => {
    expect((await tenant.request('GET', '/api/v1/pim/products')).body.map((p: { id: string }) => p.id)).toEqual([product.id]);
    expect((await tenant.request('GET', `/api/v1/pim/products/${product.id}/variants`)).body).toEqual([]);
    expect((await tenant.request('GET', '/api/v1/pim/audit')).body.map((e: { action: string }) => e.action)).toEqual(['product.created']);
  });
});
