import { describe, expect, it } from 'vitest';
import type { Tenant } from '../support/client.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

type Issue = {
  id: string;
  product_id: string;
  issue_type: string;
  severity: string;
  message: string;
  resolved: boolean;
  tenant_id: string;
  org_id: string;
};

/** Validation runs asynchronously: poll the API until the condition holds, within a bounded deadline. */
async function eventually<T>(read: () => Promise<T>, holds: (value: T) => boolean, what: string, deadlineMs = 30_000): Promise<T> {
  const until = Date.now() + deadlineMs;
  let last: T;
  do {
    last = await read();
    if (holds(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  } while (Date.now() < until);
  throw new Error(`${what} did not happen within ${deadlineMs} ms; last seen ${JSON.stringify(last)}`);
}

const issues = async (tenant: Tenant): Promise<Issue[]> => (await tenant.request<Issue[]>('GET', '/api/v1/pim/validation')).body;
const issuesOf = async (tenant: Tenant, productId: string) => (await issues(tenant)).filter((i) => i.product_id === productId);
const types = (list: Issue[]) => list.map((i) => i.issue_type).sort();

describe('validation issues', () => {
  it('raises MISSING_DESCRIPTION and LOW_QUALITY_SCORE, and resolves them when the product is fixed', async () => {
    const tenant = await ctx.newTenant();
    const { body: product } = await tenant.request('POST', '/api/v1/pim/products', { title: 'Bare' });
    expect(product.quality_score).toBe(10);
    const raised = await eventually(
      () => issuesOf(tenant, product.id),
      (l) => l.length === 2,
      'issues for a bare product',
    );
    expect(types(raised)).toEqual(['LOW_QUALITY_SCORE', 'MISSING_DESCRIPTION']);
    for (const issue of raised) {
      expect(issue).toMatchObject({ tenant_id: tenant.tenantId, org_id: tenant.orgId, severity: 'WARNING', resolved: false });
    }

    const fixed = await tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { description: 'Now described', category: 'kitchen' });
    expect(fixed.body.quality_score).toBe(45);
    await eventually(
      () => issuesOf(tenant, product.id),
      (l) => l.length === 0,
      'issues resolved by the fix',
    );
    expect((await tenant.request('GET', '/api/v1/pim/stats')).body.validation_issues).toBe(0);

    // The same problems coming back (score 10 + 15 = 25) are the same issues, open again: never a duplicate.
    await tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { description: null });
    const again = await eventually(
      () => issuesOf(tenant, product.id),
      (l) => l.length === 2,
      'the issues raised again',
    );
    expect(again.map((i) => i.id).sort()).toEqual(raised.map((i) => i.id).sort());
    expect(again.find((i) => i.issue_type === 'LOW_QUALITY_SCORE')?.message).toBe('Quality score 25 is below 40.');
  });

  it('raises INVALID_BARCODE for a wrong GTIN check digit, and deleting the product resolves all its issues', async () => {
    const tenant = await ctx.newTenant();
    const { body: product } = await tenant.request('POST', '/api/v1/pim/products', {
      title: 'Barcoded',
      description: 'Has codes',
      category: 'c',
    });
    await tenant.request('POST', `/api/v1/pim/products/${product.id}/variants`, { sku: 'BC-1', barcode: '4006381333931', price: 1 });
    const { body: bad } = await tenant.request('POST', `/api/v1/pim/products/${product.id}/variants`, {
      sku: 'BC-2',
      barcode: '4006381333932',
      price: 1,
    });
    const raised = await eventually(
      () => issuesOf(tenant, product.id),
      (l) => l.length === 1,
      'an invalid barcode issue',
    );
    expect(raised[0]).toMatchObject({ issue_type: 'INVALID_BARCODE', severity: 'ERROR', message: expect.stringContaining(bad.id) });
    expect((await tenant.request('GET', '/api/v1/pim/stats')).body.validation_issues).toBe(1);

    await tenant.request('DELETE', `/api/v1/pim/products/${product.id}`);
    await eventually(
      () => issues(tenant),
      (l) => l.length === 0,
      'issues of a deleted product resolved',
    );
  });

  it('flags a DUPLICATE_SKU on both products, and resolving one resolves the pair', async () => {
    const tenant = await ctx.newTenant();
    const make = async (title: string) =>
      (await tenant.request('POST', '/api/v1/pim/products', { title, description: 'd', category: 'c' })).body;
    const a = await make('First');
    const b = await make('Second');
    await tenant.request('POST', `/api/v1/pim/products/${a.id}/variants`, { sku: 'SAME-1', price: 2 });
    await tenant.request('POST', `/api/v1/pim/products/${b.id}/variants`, { sku: 'SAME-1', price: 2 });
    const flagged = await eventually(
      () => issues(tenant),
      (l) => l.filter((i) => i.issue_type === 'DUPLICATE_SKU').length === 2,
      'both products flagged',
    );
    const duplicates = flagged.filter((i) => i.issue_type === 'DUPLICATE_SKU');
    expect(duplicates.map((i) => i.product_id).sort()).toEqual([a.id, b.id].sort());
    for (const issue of duplicates) expect(issue.severity).toBe('ERROR');
    expect(new Set(duplicates.map((i) => i.id)).size).toBe(2);

    await tenant.request('DELETE', `/api/v1/pim/products/${b.id}`);
    await eventually(
      () => issues(tenant),
      (l) => l.every((i) => i.issue_type !== 'DUPLICATE_SKU'),
      'the pair resolved',
    );

    // The same SKU in another tenant is no duplicate.
    const other = await ctx.newTenant();
    const { body: c } = await other.request('POST', '/api/v1/pim/products', { title: 'Elsewhere', description: 'd', category: 'c' });
    await other.request('POST', `/api/v1/pim/products/${c.id}/variants`, { sku: 'SAME-1', price: 2 });
    await tenant.request('POST', '/api/v1/pim/products', { title: 'Marker' });
    await eventually(
      () => issues(tenant),
      (l) => l.some((i) => i.issue_type === 'MISSING_DESCRIPTION'),
      'the later marker product assessed',
    );
    expect((await issues(tenant)).filter((i) => i.issue_type === 'DUPLICATE_SKU')).toEqual([]);
  });

  it("flags a product's own SKU that a variant of another product also uses", async () => {
    const tenant = await ctx.newTenant();
    const { body: a } = await tenant.request('POST', '/api/v1/pim/products', {
      title: 'Own SKU',
      sku: 'SHARED',
      description: 'd',
      category: 'c',
    });
    const { body: b } = await tenant.request('POST', '/api/v1/pim/products', { title: 'Variant SKU', description: 'd', category: 'c' });
    await tenant.request('POST', `/api/v1/pim/products/${b.id}/variants`, { sku: 'SHARED', price: 1 });
    const flagged = await eventually(
      () => issues(tenant),
      (l) => l.filter((i) => i.issue_type === 'DUPLICATE_SKU').length === 2,
      'both flagged',
    );
    expect(flagged.map((i) => i.product_id).sort()).toEqual([a.id, b.id].sort());
    // Fixing the product's SKU resolves the pair.
    await tenant.request('PUT', `/api/v1/pim/products/${a.id}`, { sku: 'UNIQUE' });
    await eventually(
      () => issues(tenant),
      (l) => l.every((i) => i.issue_type !== 'DUPLICATE_SKU'),
      'the pair resolved by the fix',
    );
  });

  it('keeps issues to their tenant and org', async () => {
    const owner = await ctx.newTenant();
    const { body: product } = await owner.request('POST', '/api/v1/pim/products', { title: 'Owned' });
    await eventually(
      () => issuesOf(owner, product.id),
      (l) => l.length === 2,
      'owner issues',
    );
    for (const outsider of [await ctx.newTenant(), await ctx.newTenant({ tenantId: owner.tenantId })]) {
      expect(await issues(outsider)).toEqual([]);
      expect((await outsider.request('GET', '/api/v1/pim/stats')).body.validation_issues).toBe(0);
    }
  });

  it('scores the documented example product 70', async () => {
    const tenant = await ctx.newTenant();
    // docs/decisions.md: title 10 + description 20 + category 15 + a priced variant 15 + valid barcodes 10 = 70.
    const { body: product } = await tenant.request('POST', '/api/v1/pim/products', {
      title: 'Espresso cup',
      description: 'Porcelain, 90 ml',
      category: 'kitchen',
    });
    expect(product.quality_score).toBe(45);
    await tenant.request('POST', `/api/v1/pim/products/${product.id}/variants`, {
      sku: 'ESP-1',
      barcode: '96385074',
      price: 9.5,
      currency: 'EUR',
    });
    const read = await tenant.request('GET', `/api/v1/pim/products/${product.id}`);
    expect(read.body.quality_score).toBe(70);
    expect((await tenant.request('GET', '/api/v1/pim/products')).body[0].quality_score).toBe(70);
  });

  it("earns the template's 10 points when its required attributes are filled, here and in LOW_QUALITY_SCORE", async () => {
    const tenant = await ctx.newTenant();
    const attribute = async (body: object) => (await tenant.request('POST', '/api/v1/pim/attributes', body)).body.id as string;
    const weight = await attribute({ name: 'Weight', slug: 'weight', type: 'NUMBER' });
    const colour = await attribute({ name: 'Colour', slug: 'colour', type: 'SELECT', options: ['red', 'blue'] });
    const material = await attribute({ name: 'Material', slug: 'material' });
    const { body: group } = await tenant.request('POST', '/api/v1/pim/attribute-groups', {
      name: 'Specs',
      attribute_ids: [weight, colour, material],
    });
    const { body: template } = await tenant.request('POST', '/api/v1/pim/templates', {
      name: 'Cup',
      attribute_group_ids: [group.id],
      required_attribute_ids: [weight, colour],
    });

    // title 10 + description 20 = 30, one required attribute of two filled: no template points, a low score.
    const { status, body: product } = await tenant.request('POST', '/api/v1/pim/products', {
      title: 'Templated',
      description: 'Stoneware',
      template_id: template.id,
      attributes: { [weight]: 12.5, [material]: 'stoneware' },
    });
    expect(status).toBe(201);
    expect(product).toMatchObject({ quality_score: 30, attributes: { [weight]: '12.5', [material]: 'stoneware' } });
    const low = await eventually(
      () => issuesOf(tenant, product.id),
      (l) => l.some((i) => i.issue_type === 'LOW_QUALITY_SCORE'),
      'a low score',
    );
    expect(low.find((i) => i.issue_type === 'LOW_QUALITY_SCORE')?.message).toBe('Quality score 30 is below 40.');

    // Values must fit their attribute, and name one of the tenant's attributes.
    const wrong = await tenant.request('PUT', `/api/v1/pim/products/${product.id}`, {
      attributes: { [colour]: 'green', [weight]: 'heavy' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(
      [`body.attributes.${colour}`, `body.attributes.${weight}`].sort(),
    );
    const unknown = crypto.randomUUID();
    const missing = await tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { attributes: { [unknown]: 'x' } });
    expect(missing.status).toBe(404);
    expect(missing.body.error.details).toEqual([{ path: `body.attributes.${unknown}`, message: 'no such attribute' }]);

    // Filling the last required attribute earns the 10 points (40), and the low score resolves; null removes a value.
    const filled = await tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { attributes: { [colour]: 'red', [material]: null } });
    expect(filled.status).toBe(200);
    expect(filled.body).toMatchObject({ quality_score: 40, attributes: { [weight]: '12.5', [colour]: 'red' } });
    expect(Object.keys(filled.body.attributes).sort()).toEqual([weight, colour].sort());
    await eventually(
      () => issuesOf(tenant, product.id),
      (l) => l.length === 0,
      'the low score resolved',
    );

    // Removing a required value takes the points back; the same issue opens again.
    const emptied = await tenant.request('PUT', `/api/v1/pim/products/${product.id}`, { attributes: { [weight]: null } });
    expect(emptied.body.quality_score).toBe(30);
    const again = await eventually(
      () => issuesOf(tenant, product.id),
      (l) => l.length === 1,
      'the low score again',
    );
    expect(again[0]?.id).toBe(low.find((i) => i.issue_type === 'LOW_QUALITY_SCORE')?.id);

    // Without a template the rule earns nothing, whatever the attributes.
    const { body: plain } = await tenant.request('POST', '/api/v1/pim/products', {
      title: 'Plain',
      description: 'd',
      attributes: { [weight]: '1' },
    });
    expect(plain.quality_score).toBe(30);
  });
});
