import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import knexFactory, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTenant, type Tenant } from '../support/client.ts';
import { startService, type Service } from '../support/service.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let service: Service;
let tenant: Tenant;
let db: Knex;

beforeAll(async () => {
  service = await startService();
  tenant = await newTenant(service.baseUrl);
  db = knexFactory({ client: 'pg', connection: service.databaseUrl });
});
afterAll(async () => {
  await db?.destroy();
  await service?.stop();
});

const snapshot = async () => ({
  products: await db('rm_catalog.products').orderBy('id'),
  variants: await db('rm_catalog.variants').orderBy('id'),
  audit: await db('rm_audit.audit_events').orderBy('id'),
});

const replay = (projection: string) =>
  promisify(execFile)(join(root, 'node_modules', '.bin', 'tsx'), [join(root, 'bin', 'replay.ts'), projection], { env: service.env, timeout: 120_000 });

describe('replay', () => {
  it('rebuilds the read models from offset 0 into the same rows, while the service keeps serving', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { body } = await tenant.request('POST', '/api/v1/pim/products', { title: `Replay ${i}`, description: i % 2 ? 'odd' : null });
      ids.push(body.id);
      await tenant.request('POST', `/api/v1/pim/products/${body.id}/variants`, { sku: `R-${i}`, price: i + 0.99, currency: 'USD' });
    }
    for (const id of ids.slice(0, 4)) await tenant.request('PUT', `/api/v1/pim/products/${id}`, { title: 'Renamed', category: 'replayed' });
    for (const id of ids.slice(4, 7)) await tenant.request('DELETE', `/api/v1/pim/products/${id}`);

    const before = await snapshot();
    expect(before.products.length).toBeGreaterThanOrEqual(9);

    const result = await replay('all');
    expect(result.stdout).toMatch(/catalog: rebuilt into rm_catalog/);
    expect(result.stdout).toMatch(/audit: rebuilt into rm_audit/);
    expect(result.stderr).toMatch(/100%/);

    expect(await snapshot()).toEqual(before);
    const schemas = await db.raw("select nspname from pg_namespace where nspname like 'rm_%' order by nspname");
    expect(schemas.rows.map((r: { nspname: string }) => r.nspname)).toEqual(['rm_audit', 'rm_catalog']);

    // The service reads and writes through the swapped-in schemas without a restart.
    const created = await tenant.request('POST', '/api/v1/pim/products', { title: 'After replay' });
    expect(created.status).toBe(201);
    expect((await tenant.request('GET', `/api/v1/pim/products/${created.body.id}`)).status).toBe(200);
    const audit = await tenant.request('GET', '/api/v1/pim/audit');
    expect(audit.body[0]).toMatchObject({ action: 'product.created', entity_id: created.body.id });
  });
});
