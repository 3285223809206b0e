import { describe, expect, it } from 'vitest';
import { productAggregate } from '../../commands/catalog/product.ts';
import { readEvents } from '../support/event-log.ts';
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

    const list = await ctx.tenant.request('GET', '/api/v1/pim/products');
    const listed: string[] = list.body.map((p: { id: string }) => p.id);
    expect(new Set(listed).size).toBe(listed.length);
    for (const id of acknowledged) expect(listed).toContain(id);
    for (const id of acknowledged) expect((await ctx.tenant.request('GET', `/api/v1/pim/products/${id}`)).status).toBe(200);

    // The log, read as a downstream subscriber sees it, holds one ProductCreated per product: no decision repeated.
    const events = await readEvents(ctx.service.namespace, productAggregate.events);
    const created = events.filter((e) => e.type === 'ProductCreated').map((e) => e.envelope.aggregateId);
    expect(new Set(created).size).toBe(created.length);
    for (const id of acknowledged) expect(created).toContain(id);
    expect(created.sort()).toEqual([...listed].sort());

    // Projections resumed without applying anything twice: one audit row per event.
    const audit = await ctx.tenant.request('GET', '/api/v1/pim/audit');
    const auditedIds = audit.body.map((e: { entity_id: string }) => e.entity_id);
    expect(auditedIds.sort()).toEqual([...listed].sort());

    // And the service keeps working after the crash.
    const after = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'after the crash' });
    expect(after.status).toBe(201);
  });
});
