import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { orderAggregate } from '../../commands/oms/order.ts';
import { readEvents } from '../support/event-log.ts';
import { orderRequest, stocked, stockLevel } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

const create = (body: unknown) => ctx.tenant.request('POST', '/api/v1/oms/orders', body);

describe('orders', () => {
  it('creates a confirmed order with stock reserved, and reads it back', async () => {
    const stock = await stocked(ctx.tenant, 5);
    const customerId = randomUUID();
    const request = orderRequest({
      currency: 'eur',
      customer_id: customerId,
      sales_channel: 'web',
      platform: 'shopify',
      tags: ['vip'],
      shipping_total: '4.90',
      tax_total: 1.5,
      discount_total: '2',
      line_items: [
        {
          name: 'Espresso cup',
          quantity: 2,
          unit_price: '12.50',
          variant_id: stock.variantId,
          location_id: stock.locationId,
          sku: 'CUP-1',
          variant_label: 'White',
        },
        { name: 'Gift wrap', quantity: 1, unit_price: 0, requires_shipment: false },
      ],
    });
    const created = await create(request);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      tenant_id: ctx.tenant.tenantId,
      org_id: ctx.tenant.orgId,
      status: 'confirmed',
      currency: 'EUR',
      subtotal: '25.00',
      discount_total: '2.00',
      shipping_total: '4.90',
      tax_total: '1.50',
      total: '29.40',
      payment_status: 'authorized',
      payment_provider: 'stripe',
      payment_transaction_id: request.payment_transaction_id,
      sales_channel: 'web',
      platform: 'shopify',
      customer_id: customerId,
      idempotency_key: request.idempotency_key,
      tags: ['vip'],
    });
    expect(created.body.line_items).toEqual([
      {
        name: 'Espresso cup',
        quantity: 2,
        unit_price: '12.50',
        line_total: '25.00',
        variant_id: stock.variantId,
        location_id: stock.locationId,
        sku: 'CUP-1',
        variant_label: 'White',
        requires_shipment: true,
      },
      {
        name: 'Gift wrap',
        quantity: 1,
        unit_price: '0.00',
        line_total: '0.00',
        variant_id: null,
        location_id: null,
        sku: null,
        variant_label: null,
        requires_shipment: false,
      },
    ]);
    expect(created.body.status_history.map((h: { status: string }) => h.status)).toEqual(['pending', 'confirmed']);
    expect(await stockLevel(ctx.tenant, stock)).toMatchObject({ available: 3, reserved: 2, on_hand: 5 });

    const read = await ctx.tenant.request('GET', `/api/v1/oms/orders/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it('defaults the currency to USD and computes totals in decimal', async () => {
    const created = await create(
      orderRequest({
        line_items: [
          { name: 'A', quantity: 1, unit_price: 0.1 },
          { name: 'B', quantity: 1, unit_price: 0.2 },
          { name: 'C', quantity: 3, unit_price: 19.99 },
        ],
        tax_total: 0.07,
      }),
    );
    expect(created.status).toBe(201);
    expect(created.body.currency).toBe('USD');
    expect(created.body.line_items.map((l: { line_total: string }) => l.line_total)).toEqual(['0.10', '0.20', '59.97']);
    expect(created.body.subtotal).toBe('60.27');
    expect(created.body.total).toBe('60.34');
  });

  it('rejects every request that breaks the field rules with 400, reserving nothing', async () => {
    const stock = await stocked(ctx.tenant, 3);
    const stockLine = { name: 'Cup', quantity: 1, unit_price: 1, variant_id: stock.variantId, location_id: stock.locationId };
    const invalid: [string, Record<string, unknown>][] = [
      ['no line items', { line_items: [] }],
      ['line items missing', { line_items: undefined }],
      ['quantity zero', { line_items: [{ ...stockLine, quantity: 0 }] }],
      ['quantity negative', { line_items: [{ ...stockLine, quantity: -1 }] }],
      ['quantity fractional', { line_items: [{ ...stockLine, quantity: 1.5 }] }],
      ['negative unit price', { line_items: [stockLine, { name: 'x', quantity: 1, unit_price: -0.01 }] }],
      ['variant without location', { line_items: [{ name: 'Cup', quantity: 1, unit_price: 1, variant_id: stock.variantId }] }],
      ['variant id not a UUID', { line_items: [{ ...stockLine, variant_id: 'cup-1' }] }],
      ['location id not a UUID', { line_items: [{ ...stockLine, location_id: 'main' }] }],
      ['customer id not a UUID', { line_items: [stockLine], customer_id: 'c-42' }],
      ['currency not ISO 4217', { line_items: [stockLine], currency: 'EURO' }],
      ['no idempotency key', { line_items: [stockLine], idempotency_key: undefined }],
      ['no payment provider', { line_items: [stockLine], payment_provider: undefined }],
      ['unsupported payment provider', { line_items: [stockLine], payment_provider: 'bitcoin' }],
      ['no transaction id', { line_items: [stockLine], payment_transaction_id: undefined }],
      ['malformed stripe transaction id', { line_items: [stockLine], payment_transaction_id: 'tx-1' }],
      ['line name missing', { line_items: [{ ...stockLine, name: '' }] }],
      ['unknown field', { line_items: [stockLine], coupon: 'FREE' }],
    ];
    for (const [why, overrides] of invalid) {
      const response = await create(orderRequest(overrides));
      expect(response.status, why).toBe(400);
      expect(response.body.error.code, why).toBe('validation_failed');
    }
    const discounted = await create(orderRequest({ line_items: [stockLine], discount_total: 5 }));
    expect(discounted.status).toBe(400);
    expect(await stockLevel(ctx.tenant, stock)).toMatchObject({ available: 3, reserved: 0 });
  });

  it('refuses an order whose stock is short with 409 naming the line, reserving none of its lines', async () => {
    const plenty = await stocked(ctx.tenant, 10);
    const scarce = await stocked(ctx.tenant, 1);
    const response = await create(
      orderRequest({
        line_items: [
          { name: 'Plenty', quantity: 4, unit_price: 1, variant_id: plenty.variantId, location_id: plenty.locationId },
          { name: 'Scarce', quantity: 2, unit_price: 1, variant_id: scarce.variantId, location_id: scarce.locationId },
        ],
      }),
    );
    expect(response.status).toBe(409);
    expect(response.body.error.details).toEqual([{ path: 'body.line_items.1', message: expect.stringContaining('1 available') }]);
    expect(await stockLevel(ctx.tenant, plenty)).toMatchObject({ available: 10, reserved: 0 });
    expect(await stockLevel(ctx.tenant, scarce)).toMatchObject({ available: 1, reserved: 0 });

    const unknownLocation = await create(
      orderRequest({ line_items: [{ name: 'X', quantity: 1, unit_price: 1, variant_id: randomUUID(), location_id: randomUUID() }] }),
    );
    expect(unknownLocation.status).toBe(409);
    expect(unknownLocation.body.error.details[0].path).toBe('body.line_items.0');
  });

  it('returns the original order for a repeated idempotency key, and 409 for the key with another request', async () => {
    const stock = await stocked(ctx.tenant, 5);
    const request = orderRequest({
      line_items: [{ name: 'Cup', quantity: 2, unit_price: 3, variant_id: stock.variantId, location_id: stock.locationId }],
    });
    const first = await create(request);
    const again = await create({ ...request, line_items: request.line_items.map((line) => ({ ...line })) });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await stockLevel(ctx.tenant, stock)).toMatchObject({ available: 3, reserved: 2 });

    const different = await create({ ...request, payment_transaction_id: 'pi_0000000000other' });
    expect(different.status).toBe(409);
    expect(different.body.error.details[0].path).toBe('body.idempotency_key');

    const placed = (await readEvents(ctx.service.namespace, orderAggregate.events)).filter(
      (e) => e.type === 'OrderPlaced' && e.envelope.aggregateId === first.body.id,
    );
    expect(placed).toHaveLength(1);
  });

  it('lists orders newest first with limit and offset bounds and the total', async () => {
    const other = await ctx.newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await other.request('POST', '/api/v1/oms/orders', orderRequest())).body.id);
    const all = await other.request('GET', '/api/v1/oms/orders');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 5, limit: 50, offset: 0 });
    expect(all.body.data.map((o: { id: string }) => o.id)).toEqual([...ids].reverse());

    const page = await other.request('GET', '/api/v1/oms/orders?limit=2&offset=1');
    expect(page.body).toMatchObject({ total: 5, limit: 2, offset: 1 });
    expect(page.body.data.map((o: { id: string }) => o.id)).toEqual([ids[3], ids[2]]);
    expect((await other.request('GET', '/api/v1/oms/orders?limit=100&offset=5')).body).toMatchObject({ data: [], total: 5 });

    for (const query of ['limit=0', 'limit=101', 'limit=-1', 'offset=-1', 'limit=abc', 'offset=1.5']) {
      expect((await other.request('GET', `/api/v1/oms/orders?${query}`)).status, query).toBe(400);
    }
    expect((await other.request('GET', `/api/v1/oms/orders/${randomUUID()}`)).status).toBe(404);
    expect((await other.request('GET', '/api/v1/oms/orders/not-a-uuid')).status).toBe(400);
  });

  it('isolates tenants and orgs: orders and stock of others are invisible', async () => {
    const stock = await stocked(ctx.tenant, 2);
    const created = await create(orderRequest());
    const stranger = await ctx.newTenant();
    const sameTenantOtherOrg = await ctx.newTenant({ tenantId: ctx.tenant.tenantId });
    for (const other of [stranger, sameTenantOtherOrg]) {
      expect((await other.request('GET', `/api/v1/oms/orders/${created.body.id}`)).status).toBe(404);
      expect((await other.request('POST', `/api/v1/oms/orders/${created.body.id}/status`, { status: 'processing' })).status).toBe(404);
      expect((await other.request('GET', '/api/v1/oms/orders')).body.total).toBe(0);
      expect((await other.request('GET', '/api/v1/oms/inventory/levels')).body).toEqual([]);
      expect((await other.request('GET', '/api/v1/oms/inventory/locations')).body).toEqual([]);
      // Another org's location does not exist for this inventory: its stock cannot be set or reserved.
      expect(
        (await other.request('PUT', `/api/v1/oms/inventory/levels/${stock.variantId}/${stock.locationId}`, { available: 9 })).status,
      ).toBe(404);
      const order = await other.request(
        'POST',
        '/api/v1/oms/orders',
        orderRequest({
          line_items: [{ name: 'X', quantity: 1, unit_price: 1, variant_id: stock.variantId, location_id: stock.locationId }],
        }),
      );
      expect(order.status).toBe(409);
      // The same idempotency key in another tenant or org is another order.
      const sameKey = await other.request('POST', '/api/v1/oms/orders', orderRequest({ idempotency_key: created.body.idempotency_key }));
      expect(sameKey.status).toBe(201);
      expect(sameKey.body.id).not.toBe(created.body.id);
    }
    expect(await stockLevel(ctx.tenant, stock)).toMatchObject({ available: 2, reserved: 0 });
  });
});

describe('inventory', () => {
  it('creates locations, sets and adjusts levels, never below zero', async () => {
    const created = await ctx.tenant.request('POST', '/api/v1/oms/inventory/locations', { name: 'Berlin' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Berlin' });
    const locationId = created.body.id;
    expect((await ctx.tenant.request('GET', '/api/v1/oms/inventory/locations')).body).toContainEqual(created.body);

    const variantId = randomUUID();
    const path = `/api/v1/oms/inventory/levels/${variantId}/${locationId}`;
    const set = await ctx.tenant.request('PUT', path, { available: 7 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ variant_id: variantId, location_id: locationId, available: 7, reserved: 0, on_hand: 7 });

    const added = await ctx.tenant.request('POST', `${path}/adjustments`, { delta: 3 });
    expect(added.body).toMatchObject({ available: 10, on_hand: 10 });
    const taken = await ctx.tenant.request('POST', `${path}/adjustments`, { delta: -10 });
    expect(taken.body).toMatchObject({ available: 0 });
    const below = await ctx.tenant.request('POST', `${path}/adjustments`, { delta: -1 });
    expect(below.status).toBe(409);
    expect(below.body.error.code).toBe('conflict');

    const unchanged = await ctx.tenant.request('PUT', path, { available: 0 });
    expect(unchanged.body.updated_at).toBe(taken.body.updated_at);

    const levels = await ctx.tenant.request('GET', `/api/v1/oms/inventory/levels?location_id=${locationId}`);
    expect(levels.body).toEqual([unchanged.body]);
  });

  it('refuses invalid inventory requests', async () => {
    const { body: location } = await ctx.tenant.request('POST', '/api/v1/oms/inventory/locations', { name: 'Paris' });
    const path = `/api/v1/oms/inventory/levels/${randomUUID()}/${location.id}`;
    const cases: [string, string, unknown, number][] = [
      ['POST', '/api/v1/oms/inventory/locations', { name: '' }, 400],
      ['POST', '/api/v1/oms/inventory/locations', {}, 400],
      ['PUT', path, { available: -1 }, 400],
      ['PUT', path, { available: 1.5 }, 400],
      ['PUT', path, {}, 400],
      ['POST', `${path}/adjustments`, { delta: 0.5 }, 400],
      ['PUT', `/api/v1/oms/inventory/levels/not-a-uuid/${location.id}`, { available: 1 }, 400],
      ['PUT', `/api/v1/oms/inventory/levels/${randomUUID()}/${randomUUID()}`, { available: 1 }, 404],
      ['GET', '/api/v1/oms/inventory/levels?variant_id=nope', undefined, 400],
    ];
    for (const [method, url, body, status] of cases)
      expect((await ctx.tenant.request(method, url, body)).status, `${method} ${url} ${JSON.stringify(body)}`).toBe(status);
  });

  it('documents the order and inventory endpoints in the OpenAPI document', async () => {
    const document = await (await fetch(`${ctx.service.baseUrl}/openapi.json`)).json();
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/oms/orders',
        '/api/v1/oms/orders/{id}',
        '/api/v1/oms/orders/{id}/status',
        '/api/v1/oms/inventory/locations',
        '/api/v1/oms/inventory/levels',
        '/api/v1/oms/inventory/levels/{variant_id}/{location_id}',
        '/api/v1/oms/inventory/levels/{variant_id}/{location_id}/adjustments',
      ]),
    );
    const create = document.paths['/api/v1/oms/orders'].post;
    expect(Object.keys(create.requestBody.content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['idempotency_key', 'payment_provider', 'payment_transaction_id', 'line_items', 'currency']),
    );
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '409']));
  });
});
