import { describe, expect, it } from 'vitest';
import { productAggregate } from '../../commands/catalog/product.ts';
import { readEvents } from '../support/event-log.ts';
import { eventually } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

describe('crash safety', () => {
  it('keeps every acknowledged write exactly once across a SIGKILL mid-burst', async () => {
    const acknowledged: string[] = [];
    let attempted = 0;
    const writer = async () => {
      for (let i = 0; i < 20; i++) {
        attempted++;
        const response = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: `burst ${attempted}` }).catch(() => undefined);
        if (!response) return; // the service is gone; this write was never acknowledged
        if (response.status === 201) acknowledged.push(response.body.id);
      }
    };
    const burst = Promise.all(Array.from({ length: 4 }, writer));
    while (acknowledged.length < 15) await new Promise((r) => setTimeout(r, 10));
    await ctx.service.kill();
    await burst;
    expect(acknowledged.length).toBeGreaterThanOrEqual(15);

    await ctx.service.restart();

    // An acknowledged write was in the read model before its answer: listed at once after the restart.
    const first = await ctx.tenant.request('GET', '/api/v1/pim/products');
    for (const id of acknowledged) expect(first.body.map((p: { id: string }) => p.id)).toContain(id);
    for (const id of acknowledged) expect((await ctx.tenant.request('GET', `/api/v1/pim/products/${id}`)).status).toBe(200);

    // A create written just before the kill whose answer never came is decided after the restart, and reaches the
    // read models once the restarted service's projections have caught up: read the log and the read models until they
    // agree (or stop changing).
    const observe = async () => {
      // The log, read as a downstream subscriber sees it.
      const events = await readEvents(ctx.service.namespace, productAggregate.events);
      return {
        created: events.filter((e) => e.type === 'ProductCreated').map((e) => e.envelope.aggregateId),
        listed: ((await ctx.tenant.request('GET', '/api/v1/pim/products')).body as { id: string }[]).map((p) => p.id),
        audited: ((await ctx.tenant.request('GET', '/api/v1/pim/audit')).body as { entity_id: string }[]).map((e) => e.entity_id),
      };
    };
    const { created, listed, audited } = await eventually(
      observe,
      (o) => o.listed.length === o.created.length && o.audited.length === o.created.length,
    );
    // One ProductCreated per product: no decision repeated.
    expect(new Set(created).size).toBe(created.length);
    for (const id of acknowledged) expect(created).toContain(id);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual([...created].sort());
    // Projections resumed without applying anything twice: one audit row per event.
    expect([...audited].sort()).toEqual([...created].sort());

    // And the service keeps working after the crash.
    const after = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'after the crash' });
    expect(after.status).toBe(201);
  });
});
