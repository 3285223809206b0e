import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import knexFactory, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ctx = useServiceAndTenant();
let db: Knex;

beforeAll(() => {
  db = knexFactory({ client: 'pg', connection: ctx.service.databaseUrl });
});
afterAll(() => db?.destroy());

const snapshot = async () => ({
  products: await db('rm_catalog.products').orderBy('id'),
  variants: await db('rm_catalog.variants').orderBy('id'),
  audit: await db('rm_audit.audit_events').orderBy('id'),
  categories: await db('rm_catalog.categories').orderBy('id'),
  brands: await db('rm_catalog.brands').orderBy('id'),
  attributes: await db('rm_catalog.attributes').orderBy('id'),
  attributeGroups: await db('rm_catalog.attribute_groups').orderBy('id'),
  templates: await db('rm_catalog.templates').orderBy('id'),
  media: await db('rm_catalog.media').orderBy('id'),
  issues: await db('rm_validation.validation_issues').orderBy('id'),
});

/** The validator is asynchronous: wait (bounded) until the open issues are exactly the expected ones. */
async function openIssuesBecome(expected: string[]): Promise<void> {
  const until = Date.now() + 30_000;
  let seen: string[] = [];
  while (Date.now() < until) {
    const { body } = await ctx.tenant.request('GET', '/api/v1/pim/validation');
    seen = body.map((i: { product_id: string; issue_type: string }) => `${i.product_id}:${i.issue_type}`).sort();
    if (JSON.stringify(seen) === JSON.stringify([...expected].sort())) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`open issues stayed ${JSON.stringify(seen)}`);
}

const replay = (projection: string) =>
  promisify(execFile)(join(root, 'node_modules', '.bin', 'tsx'), [join(root, 'bin', 'replay.ts'), projection], {
    env: ctx.service.env,
    timeout: 120_000,
  });

describe('replay', () => {
  it('rebuilds the read models from offset 0 into the same rows, while the service keeps serving', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { body } = await ctx.tenant.request('POST', '/api/v1/pim/products', {
        title: `Replay ${i}`,
        description: i % 2 ? 'odd' : null,
      });
      ids.push(body.id);
      await ctx.tenant.request('POST', `/api/v1/pim/products/${body.id}/variants`, { sku: `R-${i}`, price: i + 0.99, currency: 'USD' });
    }
    for (const id of ids.slice(0, 4))
      await ctx.tenant.request('PUT', `/api/v1/pim/products/${id}`, { title: 'Renamed', category: 'replayed' });
    for (const id of ids.slice(4, 7)) await ctx.tenant.request('DELETE', `/api/v1/pim/products/${id}`);
    const root = (await ctx.tenant.request('POST', '/api/v1/pim/categories', { name: 'Root', slug: 'root' })).body;
    await ctx.tenant.request('POST', '/api/v1/pim/categories', { name: 'Leaf', slug: 'leaf', parentId: root.id });
    await ctx.tenant.request('POST', '/api/v1/pim/brands', { name: 'Replayed', logoUrl: 'https://example.com/logo.png' });
    await ctx.tenant.request('POST', '/api/v1/pim/media', { url: 'https://example.com/1.png', product_id: ids[1], sort_order: 3 });
    await ctx.tenant.request('PUT', `/api/v1/pim/products/${ids[3]}`, { sku: 'OWN-3', brand: 'Replayed' });
    const attribute = (
      await ctx.tenant.request('POST', '/api/v1/pim/attributes', { name: 'Size', slug: 'size', type: 'SELECT', options: ['S', 'M'] })
    ).body;
    const group = (await ctx.tenant.request('POST', '/api/v1/pim/attribute-groups', { name: 'Sizing', attribute_ids: [attribute.id] }))
      .body;
    const template = (
      await ctx.tenant.request('POST', '/api/v1/pim/templates', {
        name: 'Shirt',
        category_id: root.id,
        attribute_group_ids: [group.id],
        required_attribute_ids: [attribute.id],
      })
    ).body;
    const at = (i: number) => ids[i] as string;
    // Attribute values: 0 fills its template's required size (40 + 10), 2 follows the template without it, 9 sets a value and removes it.
    expect(
      (await ctx.tenant.request('PUT', `/api/v1/pim/products/${at(0)}`, { template_id: template.id, attributes: { [attribute.id]: 'M' } }))
        .body.quality_score,
    ).toBe(50);
    expect((await ctx.tenant.request('PUT', `/api/v1/pim/products/${at(2)}`, { template_id: template.id })).body.quality_score).toBe(40);
    await ctx.tenant.request('PUT', `/api/v1/pim/products/${at(9)}`, { attributes: { [attribute.id]: 'S' } });
    await ctx.tenant.request('PUT', `/api/v1/pim/products/${at(9)}`, { attributes: { [attribute.id]: null } });
    // Even-numbered products lack a description; 8 and 10 also score 25 (< 40); 0 and 2 reach 40 with their category.
    await openIssuesBecome([
      `${at(0)}:MISSING_DESCRIPTION`,
      `${at(2)}:MISSING_DESCRIPTION`,
      `${at(8)}:MISSING_DESCRIPTION`,
      `${at(8)}:LOW_QUALITY_SCORE`,
      `${at(10)}:MISSING_DESCRIPTION`,
      `${at(10)}:LOW_QUALITY_SCORE`,
    ]);

    const before = await snapshot();
    expect(before.products.length).toBeGreaterThanOrEqual(9);
    expect(before.products.find((p: { id: string }) => p.id === at(0))).toMatchObject({
      attributes: { [attribute.id]: 'M' },
      quality_score: 50,
    });
    expect(before.issues.filter((i: { resolved: boolean }) => i.resolved).length).toBeGreaterThan(0);

    const result = await replay('all');
    expect(result.stdout).toMatch(/catalog: rebuilt into rm_catalog/);
    expect(result.stdout).toMatch(/audit: rebuilt into rm_audit/);
    expect(result.stdout).toMatch(/validation: rebuilt into rm_validation/);
    expect(result.stderr).toMatch(/100%/);

    expect(await snapshot()).toEqual(before);
    const schemas = await db.raw("select nspname from pg_namespace where nspname like 'rm_%' order by nspname");
    const names = schemas.rows.map((r: { nspname: string }) => r.nspname);
    expect(names).toEqual(expect.arrayContaining(['rm_audit', 'rm_catalog', 'rm_validation']));
    expect(names.filter((name: string) => name.includes('__'))).toEqual([]);

    // The service reads and writes through the swapped-in schemas without a restart.
    const created = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'After replay' });
    expect(created.status).toBe(201);
    expect((await ctx.tenant.request('GET', `/api/v1/pim/products/${created.body.id}`)).status).toBe(200);
    const audit = await ctx.tenant.request('GET', '/api/v1/pim/audit');
    expect(audit.body[0]).toMatchObject({ action: 'product.created', entity_id: created.body.id });
  });
});
