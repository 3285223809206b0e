import { execFile, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import knexFactory, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ctx = useServiceAndTenant();
// Another ledger (its own LEDGER_NAMESPACE) on the same database: its checkpoints sit beside ours in every rm_ schema.
const neighbour = useServiceAndTenant(() => ({ database: new URL(ctx.service.databaseUrl).pathname.slice(1) }));
let db: Knex;

beforeAll(() => {
  db = knexFactory({ client: 'pg', connection: ctx.service.databaseUrl });
});
afterAll(() => db?.destroy());

/** Our tenant's rows (the neighbour's are not replayed by our namespace's replay). */
const rows = (table: string) => db(table).where({ tenant_id: ctx.tenant.tenantId }).orderBy('id');
const snapshot = async () => ({
  products: await rows('rm_catalog.products'),
  variants: await rows('rm_catalog.variants'),
  audit: await rows('rm_audit.audit_events'),
  categories: await rows('rm_catalog.categories'),
  brands: await rows('rm_catalog.brands'),
  attributes: await rows('rm_catalog.attributes'),
  attributeGroups: await rows('rm_catalog.attribute_groups'),
  templates: await rows('rm_catalog.templates'),
  media: await rows('rm_catalog.media'),
  issues: await rows('rm_validation.validation_issues'),
});

const leftSchemas = async () =>
  (await db.raw("select nspname from pg_namespace where nspname ~ '^rm_.*__' order by nspname")).rows.map(
    (r: { nspname: string }) => r.nspname,
  );

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

const tsx = join(root, 'node_modules', '.bin', 'tsx');
const replay = (...args: string[]) =>
  promisify(execFile)(tsx, [join(root, 'bin', 'replay.ts'), ...args], {
    env: ctx.service.env,
    timeout: 120_000,
  });

/** A replay that fails: its exit code and its output. */
const failedReplay = async (...args: string[]) => {
  const error = await replay(...args).then(
    () => undefined,
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
  if (!error) throw new Error(`replay ${args.join(' ')} succeeded`);
  return error;
};

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
    // The neighbour's checkpoints are in the same rm_ schemas: our replay neither reads nor waits for its topics.
    expect((await neighbour.tenant.request('POST', '/api/v1/pim/products', { title: 'Next door' })).status).toBe(201);
    const foreign = await db('rm_catalog.checkpoints').where('topic', 'like', `${neighbour.service.namespace}.%`);
    expect(foreign.length).toBeGreaterThan(0);

    const result = await replay('all');
    expect(result.stderr).toMatch(/rm_catalog also holds checkpoints of \d+ topic\(s\) this namespace does not read/);
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

  it("gives up after --timeout with a line naming what it waited for, dropping its schema and an earlier run's leftover", async () => {
    // What a replay killed with SIGKILL leaves: the next one drops it.
    await db.raw('create schema rm_catalog__rebuild_1');
    // A live checkpoint no rebuild can reach (a partition the topic does not have, as after a topic was recreated smaller).
    const topic = `${ctx.service.namespace}.catalog.product.events.v1`;
    await db('rm_catalog.checkpoints').insert({ topic, partition: 99, offset: 5 });
    try {
      // The deadline covers the whole replay: it must leave room to read the log (about a hundred events) and join the
      // consumer group on a loaded machine, so that what it gives up on is the unreachable live checkpoint.
      const started = Date.now();
      const failed = await failedReplay('catalog', '--timeout', '15');
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/dropped rm_catalog__rebuild_1, left behind by an earlier replay that did not finish/);
      expect(failed.stderr).toContain(`replay: catalog: timed out after 15 s waiting for rm_catalog__rebuild_`);
      expect(failed.stderr).toMatch(
        new RegExp(`to reach the live checkpoints of rm_catalog: ${topic.replace(/\./g, '\\.')}\\[99\\] at nothing of 5\n`),
      );
      expect(await leftSchemas()).toEqual([]);
    } finally {
      await db('rm_catalog.checkpoints').where({ topic, partition: 99 }).delete();
    }
  });

  it('drops its schema when interrupted with SIGINT mid-way, and exits non-zero', async () => {
    const child = spawn(tsx, [join(root, 'bin', 'replay.ts'), 'all'], { env: ctx.service.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const until = Date.now() + 30_000;
    while ((await leftSchemas()).length === 0) {
      if (Date.now() > until) throw new Error(`no rebuild schema appeared: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGINT');
    expect(await exited).not.toBe(0);
    expect(stderr).toMatch(/interrupted by SIGINT; dropped the unfinished rebuild schema/);
    expect(await leftSchemas()).toEqual([]);
  });
});
