import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTenant, type Tenant } from '../support/client.ts';
import { orderRequest, stocked } from '../support/orders.ts';
import { startService } from '../support/service.ts';
import type { Service } from '../support/service-process.ts';
import { uniqueName } from '../support/service-process.ts';

// Two instances of one namespace and database: one serves the API only, the other decides, projects and runs the
// workers. A write answered by the first was decided and projected by the second.
const namespace = uniqueName('roles');
const database = `cl_${namespace.replace(/-/g, '_')}`;
let edge: Service;
let background: Service;
let tenant: Tenant;

const partsOf = async (service: Service): Promise<string[]> => {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  return [...text.matchAll(/^ledger_part_restarts\{part="([^"]+)"\}/gm)].map((match) => match[1]!);
};

const readyChecks = async (service: Service) => {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${service.baseUrl}/health/ready`);
    const body = (await response.json()) as { status: string; checks: Record<string, unknown> };
    if (response.status === 200 || attempt >= 150) return { code: response.status, checks: body.checks };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

beforeAll(async () => {
  background = await startService({ namespace, database, env: { SERVICE_ROLES: 'processors,projections,streams' } });
  edge = await startService({ namespace, database, env: { SERVICE_ROLES: 'api' } });
  tenant = await newTenant(edge.baseUrl);
});

afterAll(async () => {
  await edge?.stop();
  await background?.discard();
});

describe('SERVICE_ROLES', () => {
  it('runs on each instance only the parts its roles name, and both are ready', async () => {
    const edgeParts = await partsOf(edge);
    const backgroundParts = await partsOf(background);
    expect(edgeParts).toContain('edge-replies');
    expect(edgeParts.filter((part) => /processor|router|^projection-|-worker$/.test(part))).toEqual([]);
    expect(backgroundParts).toEqual(
      expect.arrayContaining([
        'processor-thread',
        'projection-catalog+audit+validation',
        'projection-push',
        'push-worker',
        'catalog-feed-worker',
      ]),
    );
    expect((await readyChecks(edge)).code).toBe(200);
    const backgroundReady = await readyChecks(background);
    expect(backgroundReady.code).toBe(200);
    expect(Object.keys(backgroundReady.checks)).toEqual(expect.arrayContaining(['projection-catalog-lag', 'projection-validation-lag']));
  });

  it('answers a write on the API instance with what the other instance decided and projected', async () => {
    const created = await tenant.request('POST', '/api/v1/pim/products', { title: 'Split cup', category: 'kitchen' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ title: 'Split cup', category: 'kitchen', status: 'ACTIVE' });
    expect((await tenant.request('GET', `/api/v1/pim/products/${created.body.id}`)).body).toMatchObject({ title: 'Split cup' });

    const stock = await stocked(tenant, 5);
    const line = { name: 'Split cup', quantity: 2, unit_price: '4.50', variant_id: stock.variantId, location_id: stock.locationId };
    const order = await tenant.request('POST', '/api/v1/oms/orders', orderRequest({ line_items: [line] }));
    expect(order.status).toBe(201);
    expect(order.body).toMatchObject({ status: 'confirmed', total: '9.00' });
  });

  it('serves no API on an instance without the api role: one 404 error body naming the setting', async () => {
    const response = await fetch(`${background.baseUrl}/api/v1/pim/products`, { headers: tenant.headers });
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: 'not_found', message: expect.stringContaining('SERVICE_ROLES') });
    expect((await fetch(`${background.baseUrl}/health`)).status).toBe(200);
  });
});
