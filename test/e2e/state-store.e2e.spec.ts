// Issue 16: each instance keeps its processors' snapshots in a local LMDB store, a cache of the state changelogs. A
// restart reads only the changelogs' tail past what the store holds; a deleted store is rebuilt from the changelogs.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

/** Changelog records the running process read to restore its partitions, by aggregate (its own counter: it restarts at 0). */
const restoredRecords = async (aggregate: string): Promise<number> => {
  const text = await (await fetch(`${ctx.service.baseUrl}/metrics`)).text();
  const found = text.match(new RegExp(`^ledger_state_restored_records_total\\{aggregate="${aggregate}"\\} (\\d+)`, 'm'));
  return Number(found?.[1] ?? 0);
};

const storeDir = () => join(ctx.service.env.STATE_DIR!, `${ctx.service.namespace}-${ctx.service.env.PORT}`);

/** Each product's state survived: a change is decided against it (an unknown product would be 404), for its owner only. */
const expectStateOf = async (ids: string[], title: string) => {
  const stranger = await ctx.newTenant();
  for (const id of ids) {
    const updated = await ctx.tenant.request('PUT', `/api/v1/pim/products/${id}`, { title });
    expect(updated.status, `PUT ${id}`).toBe(200);
    expect(updated.body).toMatchObject({ id, title });
  }
  expect((await stranger.request('PUT', `/api/v1/pim/products/${ids[0]}`, { title: 'not yours' })).status).toBe(404);
};

describe('the state store', () => {
  it('restarts reading only the changelog tail past the store, and from the beginning once the store is deleted', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const created = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: `kept ${i}` });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
    }
    expect(await restoredRecords('product')).toBe(0);

    await ctx.service.stop();
    await ctx.service.restart();
    expect(await restoredRecords('product'), 'product state records read after a clean restart').toBe(0);
    await expectStateOf(ids, 'after a restart');

    await ctx.service.stop();
    rmSync(storeDir(), { recursive: true, force: true });
    await ctx.service.restart();
    expect(await restoredRecords('product'), 'product state records read once the store is gone').toBeGreaterThanOrEqual(12);
    await expectStateOf(ids, 'after the store was deleted');
  });

  it('is never ahead of the changelog after a SIGKILL mid-burst: every acknowledged product still decides', async () => {
    const acknowledged: string[] = [];
    let sent = 0;
    const writer = async () => {
      for (let i = 0; i < 15; i++) {
        const response = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: `burst ${sent++}` }).catch(() => undefined);
        if (!response) return;
        if (response.status === 201) acknowledged.push(response.body.id);
      }
    };
    const burst = Promise.all(Array.from({ length: 4 }, writer));
    while (acknowledged.length < 20) await new Promise((resolve) => setTimeout(resolve, 10));
    await ctx.service.kill();
    await burst;

    await ctx.service.restart();
    await expectStateOf(acknowledged, 'after a kill');
    const list = await ctx.tenant.request('GET', '/api/v1/pim/products?limit=100');
    const listed = (list.body as { id: string; title: string }[]).filter((p) => acknowledged.includes(p.id));
    expect(listed.map((p) => p.title)).toEqual(acknowledged.map(() => 'after a kill'));
  });
});
