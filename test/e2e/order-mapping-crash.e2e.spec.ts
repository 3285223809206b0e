import { createHmac, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { send, type Tenant } from '../support/client.ts';
import { connect, eventually, useStandIn } from '../support/integrations.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const standIn = useStandIn();

const ctx = useServiceAndTenant(() => ({
  env: { UNIFIED_API_URL: standIn.url, WEBHOOK_SECRET_KEY: 'order-mapping-crash-key-0123456789abcdef' },
}));

const ORDERS = 60;

type Order = { id: string; status: string; idempotency_key: string; total: string };

const allOrders = async (tenant: Tenant): Promise<Order[]> => {
  const orders: Order[] = [];
  for (let offset = 0; ; offset += 100) {
    const response = await tenant.request('GET', `/api/v1/oms/orders?limit=100&offset=${offset}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    orders.push(...response.body.data);
    if (response.body.data.length < 100) return orders;
  }
};

describe('the order mapping across a crash', () => {
  it('SIGKILL mid-burst, the platform redelivers everything: exactly one order per external order, each with its update applied', async () => {
    const tenant = ctx.tenant;
    const connection = await connect(tenant, standIn);
    const secretResponse = await tenant.request('GET', '/api/v1/integrations/webhook-secret');
    const secret: string = secretResponse.body.secret;
    const run = randomUUID().slice(0, 8);
    const externalIds = Array.from({ length: ORDERS }, (_, i) => `crash-${run}-${i}`);
    const bodies = externalIds.flatMap((id, i) => {
      const data = { id, currency: 'EUR', line_items: [{ sku: `S-${i}`, name: `Thing ${i}`, quantity: 3, unit_amount: 19.99 }] };
      return [
        JSON.stringify({ connection_id: connection.unified, event: 'accounting.order.created', data }),
        JSON.stringify({ connection_id: connection.unified, event: 'accounting.order.updated', data: { ...data, status: 'processing' } }),
      ];
    });
    const deliver = (raw: string) =>
      send(ctx.service.baseUrl, 'POST', '/unified/webhook', {
        rawBody: raw,
        headers: { 'x-unified-signature': createHmac('sha256', secret).update(raw).digest('hex') },
      }).then(
        (r) => r.status,
        () => 0,
      );
    const mapped = async () =>
      (await allOrders(tenant)).filter((o) => o.idempotency_key.startsWith(`unified:${connection.unified}:crash-${run}-`));

    // The burst, 8 deliveries at a time; the service is killed once the mapping is part way through it.
    let next = 0;
    let killed = false;
    const acknowledged: number[] = [];
    const senders = Array.from({ length: 8 }, async () => {
      while (next < bodies.length && !killed) {
        const raw = bodies[next++] as string;
        acknowledged.push(await deliver(raw));
      }
    });
    const seen = await eventually(mapped, (orders) => orders.length >= ORDERS / 4, 60_000);
    killed = true;
    await ctx.service.kill();
    await Promise.all(senders);
    const beforeKill = seen.length;
    expect(beforeKill).toBeLessThan(ORDERS);

    await ctx.service.restart();
    // The platform redelivers every event, the acknowledged ones included.
    for (let i = 0; i < bodies.length; i += 8) {
      const statuses = await Promise.all(bodies.slice(i, i + 8).map(deliver));
      expect(statuses.every((s) => s === 200)).toBe(true);
    }
    const orders = await eventually(mapped, (list) => list.length === ORDERS && list.every((o) => o.status === 'processing'), 120_000);
    expect(orders).toHaveLength(ORDERS);
    expect(new Set(orders.map((o) => o.idempotency_key)).size).toBe(ORDERS);
    expect(orders.every((o) => o.status === 'processing' && o.total === '59.97')).toBe(true);
    console.log(
      `order mapping crash: killed with ${beforeKill}/${ORDERS} orders mapped and ${acknowledged.filter((s) => s === 200).length}/${bodies.length} deliveries acknowledged; after redelivery ${orders.length} orders, one per external order`,
    );
  }, 240_000);
});
