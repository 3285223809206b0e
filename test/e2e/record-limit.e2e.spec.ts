import { beforeAll, describe, expect, it } from 'vitest';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

/**
 * A service whose topics take records of at most 64 KiB (plus headroom): every write that fits is taken, grouped
 * into transactions and produce requests that stay under the limit; one that cannot fit is a clean 4xx, and
 * nothing it refuses blocks anything after it.
 */
const LIMIT = 64 * 1024;
const ctx = useServiceAndTenant({ env: { RECORD_LIMIT_BYTES: String(LIMIT) } });
let attributeIds: string[];

const valuesFor = (ids: string[], fill: string) => Object.fromEntries(ids.map((id) => [id, fill.repeat(2000)]));

beforeAll(async () => {
  attributeIds = [];
  for (let i = 0; i < 40; i++) {
    const { status, body } = await ctx.tenant.request('POST', '/api/v1/pim/attributes', { name: `Note ${i}`, slug: `note-${i}` });
    expect(status).toBe(201);
    attributeIds.push(body.id);
  }
});

describe('the record limit', () => {
  it('takes concurrent writes that together outweigh one record batch', async () => {
    // 16 products of some 20 KB each: 320 KB, more than the topics take in one record batch.
    const created = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        ctx.tenant.request('POST', '/api/v1/pim/products', { title: `Heavy ${i}`, attributes: valuesFor(attributeIds.slice(0, 10), 'h') }),
      ),
    );
    expect(created.map((r) => r.status)).toEqual(Array(16).fill(201));
    const listed = (await ctx.tenant.request('GET', '/api/v1/pim/products')).body as { id: string; attributes: object }[];
    for (const { body } of created)
      expect(listed.find((p) => p.id === body.id)?.attributes).toEqual(valuesFor(attributeIds.slice(0, 10), 'h'));
  });

  it('answers 413 for a request whose command cannot fit one record, and writes nothing', async () => {
    const before = (await ctx.tenant.request('GET', '/api/v1/pim/stats')).body.total_products;
    const response = await ctx.tenant.request('POST', '/api/v1/pim/products', {
      title: 'Too heavy',
      attributes: valuesFor(attributeIds, 'x'),
    });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ error: { code: 'payload_too_large', message: expect.stringContaining('record limit'), details: [] } });
    expect((await ctx.tenant.request('GET', '/api/v1/pim/stats')).body.total_products).toBe(before);
  });

  it('refuses with 409 a change that would grow an aggregate past the limit, and goes on deciding', async () => {
    const { status, body: product } = await ctx.tenant.request('POST', '/api/v1/pim/products', {
      title: 'Nearly full',
      attributes: valuesFor(attributeIds.slice(0, 29), 'n'),
    });
    expect(status).toBe(201);
    const grown = await ctx.tenant.request('PUT', `/api/v1/pim/products/${product.id}`, {
      attributes: valuesFor(attributeIds.slice(29, 40), 'g'),
    });
    expect(grown.status, JSON.stringify(grown.body)).toBe(409);
    expect(grown.body.error).toMatchObject({ code: 'conflict', message: expect.stringContaining('record limit') });
    const read = await ctx.tenant.request('GET', `/api/v1/pim/products/${product.id}`);
    expect(Object.keys(read.body.attributes)).toHaveLength(29);
    // The processor is not stuck on what it refused.
    const after = await ctx.tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { title: 'Still writable' });
    expect(after.status).toBe(200);
    expect(after.body.title).toBe('Still writable');
  });
});
