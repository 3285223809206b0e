import { createHmac, randomUUID } from 'node:crypto';
import { keyedProducer, quietKafka } from '../../ledger/kafka.ts';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { inboundDeadLetterAggregate, type RedriveInboundEvent } from '../../commands/integrations/inbound-dead-letter.ts';
import { namespaced } from '../../ledger/topics.ts';
import { send, type ApiResponse, type Tenant } from '../support/client.ts';
import { connect, createProduct, eventually, remoteItemsOf, settled, useStandIn } from '../support/integrations.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const standIn = useStandIn();

const ctx = useServiceAndTenant(() => ({
  env: { UNIFIED_API_URL: standIn.url, WEBHOOK_SECRET_KEY: 'order-mapping-e2e-key-0123456789abcdef' },
}));

type Connection = { id: string; unified: string };
type Order = Record<string, any> & { id: string; status: string; idempotency_key: string; line_items: Record<string, any>[] };

const secretOf = async (who: Tenant): Promise<string> => {
  const response = await who.request('GET', '/api/v1/integrations/webhook-secret');
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.secret as string;
};

/** A platform's delivery to the receiver, signed with the connection owner's secret. */
async function deliver(secret: string, connection: Connection, event: string, data: Record<string, unknown>): Promise<ApiResponse> {
  const raw = JSON.stringify({ connection_id: connection.unified, event, data });
  const signature = createHmac('sha256', secret).update(raw).digest('hex');
  const response = await send(ctx.service.baseUrl, 'POST', '/unified/webhook', {
    rawBody: raw,
    headers: { 'x-unified-signature': signature },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response;
}

const ordersOf = async (who: Tenant): Promise<Order[]> => {
  const response = await who.request('GET', '/api/v1/oms/orders?limit=100');
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
};
const keyOf = (connection: Connection, externalId: string) => `unified:${connection.unified}:${externalId}`;
const mappedOrders = async (who: Tenant, connection: Connection, externalId: string) =>
  (await ordersOf(who)).filter((o) => o.idempotency_key === keyOf(connection, externalId));

/** Waits for the one order mapped from the external order to reach `done`; fails when there is not exactly one. */
async function mapped(
  who: Tenant,
  connection: Connection,
  externalId: string,
  done: (o: Order) => boolean = (o) => o.status !== 'pending',
) {
  const found = await eventually(
    () => mappedOrders(who, connection, externalId),
    (orders) => orders.length === 1 && done(orders[0] as Order),
  );
  expect(found).toHaveLength(1);
  const order = found[0] as Order;
  expect(done(order), JSON.stringify(order)).toBe(true);
  return order;
}

const deadLettersOf = async (who: Tenant, connection: Connection) => {
  const response = await who.request('GET', `/api/v1/integrations/connections/${connection.id}/inbound`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.dead_letters as Record<string, any>[];
};

async function addVariant(who: Tenant, productId: string, sku: string): Promise<string> {
  const response = await who.request('POST', `/api/v1/pim/products/${productId}/variants`, { sku, price: '10.00', currency: 'USD' });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.id as string;
}

async function stock(who: Tenant, variantId: string, locationId: string, available: number): Promise<void> {
  const response = await who.request('PUT', `/api/v1/oms/inventory/levels/${variantId}/${locationId}`, { available });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

const levelOf = async (who: Tenant, variantId: string, locationId: string) => {
  const response = await who.request('GET', `/api/v1/oms/inventory/levels?variant_id=${variantId}&location_id=${locationId}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body[0] as { available: number; reserved: number };
};

let secret: string;
let located: Connection;
let unlocated: Connection;
let mugVariant: string;
let plateVariant: string;
let mugRemoteId: string;
let locationId: string;
beforeAll(async () => {
  const tenant = ctx.tenant;
  secret = await secretOf(tenant);
  const mug = await createProduct(tenant, 'Mug');
  mugVariant = await addVariant(tenant, mug, 'MUG-1');
  const plate = await createProduct(tenant, 'Plate');
  plateVariant = await addVariant(tenant, plate, 'PLATE-9');
  located = await connect(tenant, standIn);
  unlocated = await connect(tenant, standIn);
  await settled(tenant, located.id);
  const [item] = await eventually(
    async () => remoteItemsOf(standIn, located.unified, mug),
    (items) => items.length === 1,
  );
  mugRemoteId = (item as { id: string }).id;
  const created = await tenant.request('POST', '/api/v1/oms/inventory/locations', { name: 'Main warehouse' });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  locationId = created.body.id;
  await stock(tenant, mugVariant, locationId, 10);
  await stock(tenant, plateVariant, locationId, 10);
}, 120_000);

describe('the default fulfilment location of a connection', () => {
  it('is set, shown on the connection and cleared; an unknown location or connection is a 404', async () => {
    const tenant = ctx.tenant;
    const path = `/api/v1/integrations/connections/${located.id}/default-location`;
    const set = await tenant.request('PUT', path, { location_id: locationId });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ id: located.id, default_location_id: locationId });
    expect((await tenant.request('GET', `/api/v1/integrations/connections/${located.id}`)).body.default_location_id).toBe(locationId);
    expect((await tenant.request('GET', `/api/v1/integrations/connections/${unlocated.id}`)).body.default_location_id).toBeNull();

    const unknownLocation = await tenant.request('PUT', path, { location_id: randomUUID() });
    expect(unknownLocation.status).toBe(404);
    const unknownConnection = await tenant.request('PUT', `/api/v1/integrations/connections/${randomUUID()}/default-location`, {
      location_id: locationId,
    });
    expect(unknownConnection.status).toBe(404);
    expect((await tenant.request('PUT', path, { location_id: 'warehouse' })).status).toBe(400);

    const other = await ctx.newTenant();
    expect((await other.request('PUT', path, { location_id: null })).status).toBe(404);
    // Another tenant's location is not one of ours.
    const theirs = await other.request('POST', '/api/v1/oms/inventory/locations', { name: 'Theirs' });
    expect((await tenant.request('PUT', path, { location_id: theirs.body.id })).status).toBe(404);

    const cleared = await tenant.request('PUT', `/api/v1/integrations/connections/${unlocated.id}/default-location`, { location_id: null });
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    expect(cleared.body.default_location_id).toBeNull();
    expect((await tenant.request('GET', `/api/v1/integrations/connections/${located.id}`)).body.default_location_id).toBe(locationId);
  });
});

describe('a created event', () => {
  it('becomes exactly one order: exact totals, the provider as channel, lines matched by item id and by SKU (reserved), one unmatched and flagged', async () => {
    const tenant = ctx.tenant;
    await tenant.request('PUT', `/api/v1/integrations/connections/${located.id}/default-location`, { location_id: locationId });
    const externalId = `ext-${randomUUID()}`;
    await deliver(secret, located, 'accounting.order.created', {
      id: externalId,
      currency: 'EUR',
      line_items: [
        { item_id: mugRemoteId, sku: 'platform-sku', name: 'Mug', quantity: 3, unit_amount: 19.99 },
        { item_id: 'not-ours', sku: 'PLATE-9', name: 'Plate', quantity: 1, unit_amount: 5.1 },
        { item_id: 'gift', sku: 'NOPE', name: 'Gift card', quantity: 1, unit_amount: 10 },
      ],
      shipping_amount: 4.9,
      payment_transaction_id: 'pay-123',
    });
    const order = await mapped(tenant, located, externalId);
    expect(order).toMatchObject({
      status: 'confirmed',
      currency: 'EUR',
      subtotal: '75.07',
      shipping_total: '4.90',
      discount_total: '0.00',
      tax_total: '0.00',
      total: '79.97',
      sales_channel: 'shopify',
      platform: 'shopify',
      payment_provider: 'shopify',
      payment_transaction_id: 'pay-123',
    });
    expect(order.line_items.map((l) => [l.name, l.quantity, l.unit_price, l.line_total])).toEqual([
      ['Mug', 3, '19.99', '59.97'],
      ['Plate', 1, '5.10', '5.10'],
      ['Gift card', 1, '10.00', '10.00'],
    ]);
    expect(order.line_items[0]).toMatchObject({ variant_id: mugVariant, location_id: locationId, sku: 'platform-sku' });
    expect(order.line_items[1]).toMatchObject({ variant_id: plateVariant, location_id: locationId, sku: 'PLATE-9' });
    expect(order.line_items[2]).toMatchObject({ variant_id: null, location_id: null, sku: 'NOPE' });
    expect(order.tags).toEqual(['unmatched-lines', 'unmatched-line:2']);
    expect(await levelOf(tenant, mugVariant, locationId)).toMatchObject({ available: 7, reserved: 3 });
    expect(await levelOf(tenant, plateVariant, locationId)).toMatchObject({ available: 9, reserved: 1 });

    // Another tenant never sees it.
    const other = await ctx.newTenant();
    expect((await ordersOf(other)).map((o) => o.id)).not.toContain(order.id);
    expect((await other.request('GET', `/api/v1/oms/orders/${order.id}`)).status).toBe(404);
    const sameTenantOtherOrg = await ctx.newTenant({ tenantId: tenant.tenantId });
    expect((await sameTenantOtherOrg.request('GET', `/api/v1/oms/orders/${order.id}`)).status).toBe(404);
  });

  it('without a default location, keeps a matched line without a variant and flags it', async () => {
    const externalId = `ext-${randomUUID()}`;
    await deliver(secret, unlocated, 'order.created', {
      id: externalId,
      line_items: [{ sku: 'MUG-1', name: 'Mug', quantity: 2, unit_amount: 0.1 }],
    });
    const order = await mapped(ctx.tenant, unlocated, externalId);
    expect(order).toMatchObject({ status: 'confirmed', currency: 'USD', subtotal: '0.20', total: '0.20' });
    expect(order.line_items[0]).toMatchObject({ variant_id: null, location_id: null, sku: 'MUG-1' });
    expect(order.tags).toEqual(['no-fulfilment-location']);
    expect(order.payment_transaction_id).toBe(`${unlocated.unified}:${externalId}`);
  });
});

describe('redeliveries and updates', () => {
  const data = (externalId: string, extra: Record<string, unknown> = {}) => ({
    id: externalId,
    line_items: [{ sku: 'X-1', name: 'Thing', quantity: 1, unit_amount: 12.5 }],
    ...extra,
  });

  it('the same created event 3× sequentially and 10× concurrently: one order', async () => {
    const sequential = `ext-${randomUUID()}`;
    for (let i = 0; i < 3; i++) await deliver(secret, unlocated, 'accounting.order.created', data(sequential));
    const concurrent = `ext-${randomUUID()}`;
    await Promise.all(Array.from({ length: 10 }, () => deliver(secret, unlocated, 'accounting.order.created', data(concurrent))));
    await mapped(ctx.tenant, unlocated, sequential);
    await mapped(ctx.tenant, unlocated, concurrent);
    // Whatever is still on its way would show by now: the receiver answered after the inbox took every delivery.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await mappedOrders(ctx.tenant, unlocated, sequential)).toHaveLength(1);
    expect(await mappedOrders(ctx.tenant, unlocated, concurrent)).toHaveLength(1);
  });

  it('an update before its create places the order from the update and applies its status; the late create changes nothing', async () => {
    const externalId = `ext-${randomUUID()}`;
    await deliver(secret, unlocated, 'accounting.order.updated', data(externalId, { status: 'processing', shipping_amount: 1 }));
    const processing = await mapped(ctx.tenant, unlocated, externalId, (o) => o.status === 'processing');
    expect(processing.total).toBe('13.50');
    for (let i = 0; i < 3; i++) await deliver(secret, unlocated, 'accounting.order.created', data(externalId));
    await deliver(secret, unlocated, 'accounting.order.updated', data(externalId, { status: 'shipped' }));
    const shipped = await mapped(ctx.tenant, unlocated, externalId, (o) => o.status === 'shipped');
    expect(shipped.id).toBe(processing.id);
    expect(shipped.total).toBe('13.50');
    expect(shipped.status_history.map((h: { status: string; outcome: string }) => `${h.status}:${h.outcome}`)).toEqual(
      expect.arrayContaining(['processing:applied', 'shipped:applied']),
    );
  });

  it('a cancelling update cancels and releases the reservation; a move the state machine refuses is recorded', async () => {
    const tenant = ctx.tenant;
    const externalId = `ext-${randomUUID()}`;
    const before = await levelOf(tenant, mugVariant, locationId);
    await deliver(secret, located, 'accounting.order.created', {
      id: externalId,
      line_items: [{ item_id: mugRemoteId, name: 'Mug', quantity: 2, unit_amount: 19.99 }],
    });
    await mapped(tenant, located, externalId, (o) => o.status === 'confirmed');
    expect(await levelOf(tenant, mugVariant, locationId)).toMatchObject({ available: before.available - 2, reserved: before.reserved + 2 });
    await deliver(secret, located, 'accounting.order.updated', {
      id: externalId,
      status: 'voided',
      line_items: [{ name: 'Mug', quantity: 2, unit_amount: 19.99 }],
    });
    await mapped(tenant, located, externalId, (o) => o.status === 'cancelled');
    const released = await eventually(
      () => levelOf(tenant, mugVariant, locationId),
      (l) => l.reserved === before.reserved,
    );
    expect(released).toMatchObject({ available: before.available, reserved: before.reserved });
    await deliver(secret, located, 'accounting.order.updated', {
      id: externalId,
      status: 'delivered',
      line_items: [{ name: 'Mug', quantity: 2, unit_amount: 19.99 }],
    });
    const refused = await mapped(tenant, located, externalId, (o) =>
      o.status_history.some(
        (h: { outcome: string; requested_status: string }) => h.outcome === 'rejected' && h.requested_status === 'delivered',
      ),
    );
    expect(refused.status).toBe('cancelled');
  });

  it('an order whose stock cannot be reserved is recorded as rejected, visible in the list', async () => {
    const externalId = `ext-${randomUUID()}`;
    await deliver(secret, located, 'accounting.order.created', {
      id: externalId,
      line_items: [{ item_id: mugRemoteId, name: 'Mug', quantity: 1000, unit_amount: 1 }],
    });
    const order = await mapped(ctx.tenant, located, externalId);
    expect(order.status).toBe('rejected');
    expect(order.rejection).toEqual({ reason: 'insufficient_stock', message: expect.stringContaining('available'), line_index: 0 });
    expect(order.status_history.map((h: { status: string }) => h.status)).toContain('rejected');
    expect(order.line_items[0]).toMatchObject({ variant_id: mugVariant, location_id: locationId, quantity: 1000 });
  });
});

describe('an event that can never be mapped', () => {
  it('is dead-lettered with its reason, listed on the connection, and the events behind it are still mapped', async () => {
    const tenant = ctx.tenant;
    const externalId = `ext-${randomUUID()}`;
    const noLines = `ext-${randomUUID()}`;
    await deliver(secret, unlocated, 'accounting.order.created', {
      id: externalId,
      currency: 'XYZ',
      line_items: [{ name: 'Thing', quantity: 1, unit_amount: 1 }],
    });
    await deliver(secret, unlocated, 'accounting.order.created', { id: noLines, line_items: [] });
    // Behind the bad one on the same external order (so the same inbox partition): a good update.
    await deliver(secret, unlocated, 'accounting.order.updated', {
      id: externalId,
      currency: 'usd',
      status: 'paid',
      line_items: [{ name: 'Thing', quantity: 1, unit_amount: 1 }],
    });
    const order = await mapped(tenant, unlocated, externalId);
    expect(order).toMatchObject({ status: 'confirmed', currency: 'USD', total: '1.00' });

    const letters = await eventually(
      () => deadLettersOf(tenant, unlocated),
      (list) => list.some((l) => l.external_id === externalId) && list.some((l) => l.external_id === noLines),
    );
    const currency = letters.find((l) => l.external_id === externalId);
    expect(currency).toMatchObject({ event: 'accounting.order.created', status: 'DEAD_LETTERED', times_dead_lettered: 1 });
    expect(currency?.reason).toMatch(/"XYZ" is not an ISO 4217 currency code/);
    expect(currency?.dead_lettered_at).toEqual(expect.any(String));
    expect(letters.find((l) => l.external_id === noLines)?.reason).toMatch(/line_items must be a non-empty array/);
    expect(await mappedOrders(tenant, unlocated, noLines)).toHaveLength(0);

    const other = await ctx.newTenant();
    expect((await other.request('GET', `/api/v1/integrations/connections/${unlocated.id}/inbound`)).status).toBe(404);

    // The operator's re-drive (what the DLQ CLI sends): the mapping takes it again, fails the same way, files it again.
    const stack = inject('stack');
    const producer = keyedProducer(quietKafka(stack.kafkaBrokers, 'order-mapping-e2e'));
    await producer.connect();
    try {
      const command: RedriveInboundEvent = {
        type: 'RedriveInboundEvent',
        data: { inboundDeadLetterId: currency?.id },
        metadata: {
          commandId: randomUUID(),
          tenantId: tenant.tenantId,
          orgId: tenant.orgId,
          actor: { userId: null, email: null, ip: null },
          issuedAt: Date.now(),
          correlationId: randomUUID(),
        },
      };
      await producer.send({
        topic: namespaced(ctx.service.namespace, inboundDeadLetterAggregate.commands.name),
        messages: [{ key: currency?.id, value: JSON.stringify(command), headers: { 'command-type': command.type } }],
      });
    } finally {
      await producer.disconnect();
    }
    const again = await eventually(
      () => deadLettersOf(tenant, unlocated),
      (list) => list.find((l) => l.id === currency?.id)?.times_dead_lettered === 2,
    );
    expect(again.find((l) => l.id === currency?.id)).toMatchObject({
      status: 'DEAD_LETTERED',
      times_dead_lettered: 2,
      redriven_at: expect.any(String),
    });
    expect(await mappedOrders(tenant, unlocated, externalId)).toHaveLength(1);
  });
});
