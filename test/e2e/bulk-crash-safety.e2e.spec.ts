import { describe, expect, it } from 'vitest';
import { bulkJobAggregate } from '../../commands/bulk/bulk-job.ts';
import { productAggregate } from '../../commands/catalog/product.ts';
import { readEvents } from '../support/event-log.ts';
import { jobEnd, readJob, submitJob } from '../support/bulk.ts';
import type { Tenant } from '../support/client.ts';
import { eventually } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

const ITEMS = 4_000;

/** Waits until the job has applied some items but not all, then kills the service (SIGKILL) and starts it again. */
async function crashMidJob(tenant: Tenant, jobId: string): Promise<number> {
  for (const until = Date.now() + 60_000; Date.now() < until;) {
    const job = await readJob(tenant, jobId);
    if ((job.processed_items ?? 0) > 0 && job.status === 'PROCESSING') {
      await ctx.service.kill();
      await ctx.service.restart();
      return job.processed_items ?? 0;
    }
    if (job.status === 'COMPLETED' || job.status === 'FAILED') throw new Error('the job ended before the crash');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the job never started');
}

const eventsOfTenant = async (tenant: Tenant, type: string) =>
  (await readEvents(ctx.service.namespace, productAggregate.events)).filter(
    (e) => e.envelope.tenantId === tenant.tenantId && e.type === type,
  );

describe('bulk jobs across a crash', () => {
  it('resumes an import and an update after a SIGKILL mid-job: every item applied exactly once, the counts right', async () => {
    const tenant = ctx.tenant;
    const items = Array.from({ length: ITEMS }, (_, i) => ({ title: `Crash item ${i}`, sku: `CRASH-${i}`, description: 'x' }));
    const imported = await submitJob(tenant, 'BULK_IMPORT', items);
    expect(imported.status).toBe(200);
    const before = await crashMidJob(tenant, imported.body.id);
    expect(before).toBeLessThan(ITEMS);

    const { job } = await jobEnd(tenant, imported.body.id);
    expect(job).toMatchObject({ status: 'COMPLETED', total_items: ITEMS, processed_items: ITEMS, failed_items: 0 });
    // The catalog's read model is another projection than the job's, restarted by the crash too: it counts the last
    // items once it has caught up.
    const stats = await eventually(
      () => tenant.request('GET', '/api/v1/pim/stats'),
      (r) => r.body.total_products >= ITEMS,
    );
    expect(stats.body.total_products).toBe(ITEMS);
    const created = await eventsOfTenant(tenant, 'ProductCreated');
    expect(created).toHaveLength(ITEMS);
    expect(new Set(created.map((e) => (e.data as { title: string }).title)).size).toBe(ITEMS);

    const ids = created.map((e) => e.envelope.aggregateId);
    const updated = await submitJob(tenant, 'BULK_UPDATE', { ids, set: { category: 'after-crash' } });
    await crashMidJob(tenant, updated.body.id);
    const updateEnd = (await jobEnd(tenant, updated.body.id)).job;
    expect(updateEnd, JSON.stringify(updateEnd.errors?.slice(0, 5))).toMatchObject({
      status: 'COMPLETED',
      processed_items: ITEMS,
      failed_items: 0,
    });
    expect(await eventsOfTenant(tenant, 'ProductUpdated')).toHaveLength(ITEMS);
    const sample = await eventually(
      () => tenant.request('GET', `/api/v1/pim/products/${ids[ITEMS - 1]}`),
      (r) => r.body.category === 'after-crash',
    );
    expect(sample.body.category).toBe('after-crash');

    // The job's own story has each slice once: the items' outcomes add up to the job's size.
    const jobEvents = (await readEvents(ctx.service.namespace, bulkJobAggregate.events)).filter(
      (e) => e.envelope.aggregateId === updated.body.id,
    );
    const slices = jobEvents
      .filter((e) => e.type === 'BulkItemsProcessed')
      .map((e) => ({ ...(e.data as { firstIndex: number; count: number }), at: `${e.position.partition}@${e.position.offset}` }));
    // Each slice's first item and where it was read, so that a missing or repeated slice names itself.
    const covered = slices.map(({ firstIndex, count, at }) => `${firstIndex}+${count} (${at})`);
    expect(
      slices.reduce((sum, s) => sum + s.count, 0),
      covered.join(', '),
    ).toBe(ITEMS);
    expect(new Set(slices.map((s) => s.firstIndex)).size, covered.join(', ')).toBe(slices.length);
    expect(jobEvents.filter((e) => e.type === 'BulkJobCompleted')).toHaveLength(1);
  });
});
