import { describe, expect, it } from 'vitest';
import { orderRequest, stocked } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

// The end-to-end smoke test `npm run test:node-versions` runs under each supported Node major (it also runs in the
// whole suite): the service, spawned with the test's own node binary, writes and reads through every layer.
const ctx = useServiceAndTenant();

describe('smoke', () => {
  it('runs on the Node that runs the tests: a product created and read back, an order placed and confirmed', async () => {
    const metrics = await fetch(`${ctx.service.baseUrl}/metrics`).then((r) => r.text());
    expect(metrics).toContain(`nodejs_version_info{version="${process.version}"`);
    expect((await fetch(`${ctx.service.baseUrl}/openapi.json`)).status).toBe(200);

    const created = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Smoke cup', category: 'kitchen' });
    expect(created.status).toBe(201);
    const read = await ctx.tenant.request('GET', `/api/v1/pim/products/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: created.body.id, title: 'Smoke cup', category: 'kitchen' });

    const stock = await stocked(ctx.tenant, 3);
    const order = await ctx.tenant.request(
      'POST',
      '/api/v1/oms/orders',
      orderRequest({
        currency: 'eur',
        line_items: [{ name: 'Smoke cup', quantity: 2, unit_price: '4.50', variant_id: stock.variantId, location_id: stock.locationId }],
      }),
    );
    expect(order.status).toBe(201);
    expect(order.body).toMatchObject({ status: 'confirmed', total: '9.00' });
    expect((await ctx.tenant.request('GET', `/api/v1/oms/orders/${order.body.id}`)).body).toMatchObject({ status: 'confirmed' });
  });
});
