import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { projectionLockKey } from '../../ledger/projection-runner.ts';
import { productAggregate } from '../../commands/catalog/product.ts';
import { catalogProjection } from '../../projections/catalog/catalog-projection.ts';
import { newTenant, type ApiResponse } from '../support/client.ts';
import { readEvents } from '../support/event-log.ts';
import { eventually } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';
import { startService, type Service } from '../support/service.ts';

const ctx = useServiceAndTenant();

const withKey = (key: string) => ({ 'idempotency-key': key });
const newKey = () => `key-${randomUUID()}`;

const expectCreated = (response: ApiResponse) => expect(response.status, JSON.stringify(response.body)).toBe(201);

const reusedKey = {
  error: {
    code: 'conflict',
    message: 'the Idempotency-Key was already used with a different request',
    details: [{ path: 'headers.idempotency-key', message: 'already used with a different request' }],
  },
};

describe('Idempotency-Key', () => {
  it('on product create: a retry after a simulated timeout creates one product', async () => {
    // Every write of this service times out at once, although the ledger goes on to apply it.
    const hurried = await startService({ env: { COMMAND_TIMEOUT_MS: '1' } });
    let patient: Service | undefined;
    try {
      const client = await newTenant(hurried.baseUrl);
      const key = newKey();
      const body = { title: 'Retried cup', category: 'kitchen' };
      const sentAt = Date.now();
      const first = await client.request('POST', '/api/v1/pim/products', body, withKey(key));
      expect(first.status, JSON.stringify(first.body)).toBe(503);
      expect(first.body.error.code).toBe('unavailable');
      const applied = await eventually(
        () => client.request('GET', '/api/v1/pim/products'),
        (list) => list.body.length > 0,
      );
      expect(applied.body).toHaveLength(1);
      const original = applied.body[0];
      await hurried.stop();

      // The client retries against the service with its usual timeout (same ledger and read models).
      patient = await startService({ namespace: hurried.namespace });
      const again = await newTenant(patient.baseUrl, { tenantId: client.tenantId, orgId: client.orgId, email: client.email });
      const retryAt = Date.now();
      const retry = await again.request('POST', '/api/v1/pim/products', body, withKey(key));
      expectCreated(retry);
      expect(retry.body).toEqual(original);

      const list = await again.request('GET', '/api/v1/pim/products');
      expect(list.body).toEqual([original]);
      // One decision in the log, the first attempt's: the retry wrote nothing.
      const created = (await readEvents(patient.namespace, productAggregate.events)).filter((event) => event.type === 'ProductCreated');
      expect(created.map((event) => event.envelope.aggregateId)).toEqual([original.id]);
      expect(created[0]?.envelope.occurredAt).toBeGreaterThanOrEqual(sentAt);
      expect(created[0]?.envelope.occurredAt).toBeLessThan(retryAt);
    } finally {
      await hurried.stop();
      await patient?.stop();
    }
  });

  it('on product create: a retry while the read model lags waits for the original, never answering 404', async () => {
    const lagging = await startService({ env: { COMMAND_TIMEOUT_MS: '5000' } });
    const db = new pg.Client({ connectionString: lagging.databaseUrl });
    const lock = [projectionLockKey(catalogProjection)];
    try {
      await db.connect();
      const client = await newTenant(lagging.baseUrl);
      const key = newKey();
      const body = { title: 'Lagging cup' };
      // The catalog read model takes this lock for every batch: while the test holds it, writes are decided but not shown.
      await db.query('select pg_advisory_lock(hashtext($1))', lock);
      const first = await client.request('POST', '/api/v1/pim/products', body, withKey(key));
      expect(first.status, JSON.stringify(first.body)).toBe(503);
      // The ledger knows the product, the read model not yet: the retry waits for it, as the original did.
      const early = await client.request('POST', '/api/v1/pim/products', body, withKey(key));
      expect(early.status, JSON.stringify(early.body)).toBe(503);
      await db.query('select pg_advisory_unlock(hashtext($1))', lock);

      const retry = await client.request('POST', '/api/v1/pim/products', body, withKey(key));
      expectCreated(retry);
      expect(retry.body).toMatchObject({ title: 'Lagging cup', tenant_id: client.tenantId });
      expect((await client.request('GET', '/api/v1/pim/products')).body).toEqual([retry.body]);
      const created = (await readEvents(lagging.namespace, productAggregate.events)).filter((event) => event.type === 'ProductCreated');
      expect(created.map((event) => event.envelope.aggregateId)).toEqual([retry.body.id]);
    } finally {
      await db.end();
      await lagging.stop();
    }
  });

  it('answers concurrent copies of one create with the one record', async () => {
    const crowd = await ctx.newTenant();
    const key = newKey();
    const copies = await Promise.all(
      Array.from({ length: 5 }, () => crowd.request('POST', '/api/v1/pim/products', { title: 'Once only' }, withKey(key))),
    );
    for (const copy of copies) expectCreated(copy);
    const [first] = copies;
    for (const copy of copies) expect(copy.body).toEqual(first?.body);
    expect((await crowd.request('GET', '/api/v1/pim/products')).body).toEqual([first?.body]);
  });

  it('on a taxonomy create: the same key and body answer the original category', async () => {
    const key = newKey();
    const body = { name: 'Kettles', slug: `kettles-${randomUUID().slice(0, 8)}` };
    const first = await ctx.tenant.request('POST', '/api/v1/pim/categories', body, withKey(key));
    expectCreated(first);
    // Without the key this would be 409: the slug is taken, by the original.
    const retry = await ctx.tenant.request('POST', '/api/v1/pim/categories', body, withKey(key));
    expectCreated(retry);
    expect(retry.body).toEqual(first.body);
    const categories = (await ctx.tenant.request('GET', '/api/v1/pim/categories')).body as { slug: string }[];
    expect(categories.filter((category) => category.slug === body.slug)).toEqual([first.body]);
  });

  it('on a variant create: the same key and body answer the original variant', async () => {
    const { body: product } = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Mug with variants' });
    const key = newKey();
    // The same request spelt differently (number or string price, currency case, field order) is the same request.
    const first = await ctx.tenant.request(
      'POST',
      `/api/v1/pim/products/${product.id}/variants`,
      { sku: 'MUG-RED', price: 9.5, currency: 'eur' },
      withKey(key),
    );
    expectCreated(first);
    const retry = await ctx.tenant.request(
      'POST',
      `/api/v1/pim/products/${product.id}/variants`,
      { currency: 'EUR', price: '9.50', sku: 'MUG-RED' },
      withKey(key),
    );
    expectCreated(retry);
    expect(retry.body).toEqual(first.body);
    expect((await ctx.tenant.request('GET', `/api/v1/pim/products/${product.id}/variants`)).body).toEqual([first.body]);

    // The key is the product's: the same key adds a variant to another product.
    const { body: other } = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Another mug' });
    const elsewhere = await ctx.tenant.request(
      'POST',
      `/api/v1/pim/products/${other.id}/variants`,
      { sku: 'MUG-RED', price: 9.5, currency: 'eur' },
      withKey(key),
    );
    expectCreated(elsewhere);
    expect(elsewhere.body.id).not.toBe(first.body.id);
  });

  it('refuses the same key with another body with 409, and writes nothing', async () => {
    const key = newKey();
    const product = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Teapot' }, withKey(key));
    expectCreated(product);
    const reused = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Teapot, large' }, withKey(key));
    expect(reused.status).toBe(409);
    expect(reused.body).toEqual(reusedKey);
    expect((await ctx.tenant.request('GET', `/api/v1/pim/products/${product.body.id}`)).body).toEqual(product.body);

    const taxonomyKey = newKey();
    const slug = `kettles-${randomUUID().slice(0, 8)}`;
    expectCreated(await ctx.tenant.request('POST', '/api/v1/pim/categories', { name: 'Kettles', slug }, withKey(taxonomyKey)));
    const renamed = await ctx.tenant.request(
      'POST',
      '/api/v1/pim/categories',
      { name: 'Kettles', slug: `${slug}-2` },
      withKey(taxonomyKey),
    );
    expect(renamed.status).toBe(409);
    expect(renamed.body).toEqual(reusedKey);
    const slugs = ((await ctx.tenant.request('GET', '/api/v1/pim/categories')).body as { slug: string }[]).map((category) => category.slug);
    expect(slugs).toContain(slug);
    expect(slugs).not.toContain(`${slug}-2`);
  });

  it("keeps one tenant's key apart from another tenant's, and one kind of record's from another's", async () => {
    const key = newKey();
    const other = await ctx.newTenant();
    const mine = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Mine' }, withKey(key));
    // Another body under the same key: no conflict, and no replay of the first tenant's record.
    const theirs = await other.request('POST', '/api/v1/pim/products', { title: 'Theirs' }, withKey(key));
    expectCreated(mine);
    expectCreated(theirs);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.body).toMatchObject({ tenant_id: other.tenantId, org_id: other.orgId, title: 'Theirs' });
    expect((await other.request('GET', '/api/v1/pim/products')).body).toEqual([theirs.body]);
    expect((await other.request('GET', `/api/v1/pim/products/${mine.body.id}`)).status).toBe(404);
    expect((await ctx.tenant.request('GET', `/api/v1/pim/products/${mine.body.id}`)).body).toEqual(mine.body);

    // In the one taxonomy of an org, a category's key and an attribute's key do not collide.
    expectCreated(
      await ctx.tenant.request(
        'POST',
        '/api/v1/pim/categories',
        { name: 'Keyed', slug: `keyed-${randomUUID().slice(0, 8)}` },
        withKey(key),
      ),
    );
    expectCreated(
      await ctx.tenant.request(
        'POST',
        '/api/v1/pim/attributes',
        { name: 'Keyed', slug: `keyed-${randomUUID().slice(0, 8)}` },
        withKey(key),
      ),
    );
  });

  it('honours the key on every other create: brands, attributes, attribute groups, templates, media, stock locations', async () => {
    const org = await ctx.newTenant();
    const twice = async (path: string, body: Record<string, unknown>) => {
      const key = newKey();
      const first = await org.request('POST', path, body, withKey(key));
      expectCreated(first);
      const retry = await org.request('POST', path, body, withKey(key));
      expectCreated(retry);
      expect(retry.body).toEqual(first.body);
      return first.body;
    };
    const { body: product } = await org.request('POST', '/api/v1/pim/products', { title: 'Kettle' });
    const brand = await twice('/api/v1/pim/brands', { name: 'Acme' });
    const attribute = await twice('/api/v1/pim/attributes', { name: 'Colour', slug: 'colour', type: 'SELECT', options: ['red'] });
    const group = await twice('/api/v1/pim/attribute-groups', { name: 'Looks', attribute_ids: [attribute.id] });
    const template = await twice('/api/v1/pim/templates', {
      name: 'Kettle',
      attribute_group_ids: [group.id],
      required_attribute_ids: [attribute.id],
    });
    const media = await twice('/api/v1/pim/media', { url: 'https://cdn.example.com/kettle.jpg', product_id: product.id });
    const location = await twice('/api/v1/oms/inventory/locations', { name: 'Main warehouse' });

    expect((await org.request('GET', '/api/v1/pim/brands')).body).toEqual([brand]);
    expect((await org.request('GET', '/api/v1/pim/attributes')).body).toEqual([attribute]);
    expect((await org.request('GET', '/api/v1/pim/attribute-groups')).body).toEqual([group]);
    expect((await org.request('GET', '/api/v1/pim/templates')).body).toEqual([template]);
    expect((await org.request('GET', `/api/v1/pim/media?product_id=${product.id}`)).body).toEqual([media]);
    expect((await org.request('GET', '/api/v1/oms/inventory/locations')).body).toEqual([location]);
  });

  it('answers a retry whose record has since been deleted with 404', async () => {
    const key = newKey();
    const created = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Gone soon' }, withKey(key));
    expectCreated(created);
    expect((await ctx.tenant.request('DELETE', `/api/v1/pim/products/${created.body.id}`)).status).toBe(204);
    const retry = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Gone soon' }, withKey(key));
    expect(retry.status, JSON.stringify(retry.body)).toBe(404);
    expect(retry.body.error.code).toBe('not_found');
  });

  it('is declared on every create in the OpenAPI document', async () => {
    const document = await (await fetch(`${ctx.service.baseUrl}/openapi.json`)).json();
    const creates = [
      '/api/v1/pim/products',
      '/api/v1/pim/products/{product_id}/variants',
      '/api/v1/pim/categories',
      '/api/v1/pim/brands',
      '/api/v1/pim/attributes',
      '/api/v1/pim/attribute-groups',
      '/api/v1/pim/templates',
      '/api/v1/pim/media',
      '/api/v1/oms/inventory/locations',
    ];
    for (const path of creates) {
      const header = document.paths[path]?.post?.parameters?.find(
        (parameter: { in: string; name: string }) => parameter.in === 'header' && parameter.name === 'idempotency-key',
      );
      expect(header, path).toMatchObject({ required: false, schema: { type: 'string', maxLength: 255 } });
    }
  });

  it('creates as before without the header, and refuses a malformed one with 400', async () => {
    const org = await ctx.newTenant();
    const one = await org.request('POST', '/api/v1/pim/products', { title: 'Twin' });
    const two = await org.request('POST', '/api/v1/pim/products', { title: 'Twin' });
    expectCreated(one);
    expectCreated(two);
    expect(two.body.id).not.toBe(one.body.id);

    for (const malformed of ['', 'k'.repeat(256), 'café']) {
      const refused = await org.request('POST', '/api/v1/pim/products', { title: 'Twin' }, withKey(malformed));
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error.code).toBe('validation_failed');
      expect(refused.body.error.details.map((detail: { path: string }) => detail.path)).toEqual(['headers.idempotency-key']);
    }
    expectCreated(await org.request('POST', '/api/v1/pim/products', { title: 'Longest key' }, withKey('k'.repeat(255))));
    expect((await org.request('GET', '/api/v1/pim/products')).body).toHaveLength(3);
  });
});
