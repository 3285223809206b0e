import { describe, expect, it } from 'vitest';
import { connectQuietly, eventually, settled, useStandIn } from '../support/integrations.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const standIn = useStandIn();

const ctx = useServiceAndTenant(() => ({
  env: { UNIFIED_API_URL: standIn.url, PUSH_LEASE_MS: '2000', UNIFIED_TIMEOUT_MS: '5000', PUSH_PER_CONNECTION: '4' },
}));

const PRODUCTS = 40;

/** Our product id from a stand-in item's reference (`cl:<productId>` in its metadata). */
const referenceOf = (item: { metadata?: { value?: unknown }[] }) =>
  item.metadata
    ?.map((m) => m.value)
    .find((v): v is string => typeof v === 'string' && v.startsWith('cl:'))
    ?.slice(3);

describe('product push across a crash', () => {
  it('leaves every product at every connection exactly once, with its latest title, after a SIGKILL mid-fan-out', async () => {
    const tenant = ctx.tenant;
    const connections = [
      await connectQuietly(tenant, standIn),
      await connectQuietly(tenant, standIn, 'woocommerce'),
      await connectQuietly(tenant, standIn, 'bigcommerce'),
    ];
    // One platform answers a little late, so that pushes are in flight when the service dies.
    standIn.slow(connections[2]!.unified, 300);
    standIn.resetLog();

    // The burst: four writers, each creating products of its own and updating the ones it has created, until the crash.
    // Per product: the last acknowledged title, and the titles of writes the crash left unanswered (they may have applied).
    const acknowledged = new Map<string, string>();
    const unanswered: string[] = [];
    let created = 0;
    let updates = 0;
    const writer = async (w: number) => {
      const mine: string[] = [];
      for (let n = 0; ; n++) {
        const index = w + 4 * n;
        if (index < PRODUCTS) {
          const title = `item ${index} v0`;
          const response = await tenant.request('POST', '/api/v1/pim/products', { title }).catch(() => undefined);
          if (response?.status !== 201) {
            unanswered.push(title);
            if (!response) return;
            continue;
          }
          mine.push(response.body.id);
          acknowledged.set(response.body.id, title);
          created++;
        }
        if (mine.length === 0) {
          if (index >= PRODUCTS) return;
          continue;
        }
        const id = mine[n % mine.length]!;
        const title = `${acknowledged.get(id)!.replace(/ v.*$/, '')} v${n + 1}`;
        const response = await tenant.request('PUT', `/api/v1/pim/products/${id}`, { title }).catch(() => undefined);
        if (response?.status !== 200) {
          unanswered.push(title);
          if (!response) return;
          continue;
        }
        acknowledged.set(id, title);
        updates++;
      }
    };
    const burst = Promise.all([0, 1, 2, 3].map(writer));

    // Kill mid-burst, while the slow platform is behind: creates and updates still fanning out.
    const slow = connections[2]!.unified;
    const pushedSoFar = () => connections.reduce((sum, c) => sum + standIn.items(c.unified).length, 0);
    const before = await eventually(
      async () => {
        const items = standIn.items(slow);
        const behind = items.length < created || items.some((item) => acknowledged.get(referenceOf(item) ?? '') !== item.name);
        return { created, updates, slowItems: items.length, behind };
      },
      (s) => s.created >= 28 && s.updates >= 10 && s.slowItems > 0 && s.behind,
      60_000,
    );
    expect(before.created).toBeGreaterThanOrEqual(28);
    expect(before.created).toBeLessThan(PRODUCTS);
    expect(before.behind).toBe(true);
    await ctx.service.kill();
    await burst;
    const atKill = { pushed: pushedSoFar(), created, updates, unanswered: unanswered.length };
    await ctx.service.restart();
    const restartedAt = Date.now();

    // The service's own record of each product decides the title it must have everywhere. A create whose answer the
    // kill cut off may still be on its way into the catalog's read model (a restarted service serves at once), so the
    // record is read again until every platform holds exactly what it lists.
    const catalog = async () => {
      const list = await tenant.request('GET', '/api/v1/pim/products');
      expect(list.status).toBe(200);
      return new Map<string, string>(list.body.map((p: { id: string; title: string }) => [p.id, p.title]));
    };
    const latestEverywhere = (titles: Map<string, string>) =>
      connections.every((c) => {
        const items = standIn.items(c.unified);
        return items.length === titles.size && items.every((item) => titles.get(referenceOf(item) ?? '') === item.name);
      });
    // Converged: every platform holds what the catalog lists, and every connection's own count agrees.
    const converged = await eventually(
      async () => {
        const listed = await catalog();
        const statuses = latestEverywhere(listed) ? await Promise.all(connections.map((c) => settled(tenant, c.id, 60_000))) : [];
        return { listed, statuses };
      },
      ({ listed, statuses }) => statuses.length === connections.length && statuses.every((status) => status.items.synced === listed.size),
      120_000,
    );
    const titles = converged.listed;
    for (const id of acknowledged.keys()) expect(titles.has(id), id).toBe(true);
    for (const [id, title] of titles) {
      if (acknowledged.has(id)) expect([acknowledged.get(id), ...unanswered]).toContain(title);
      else expect(unanswered).toContain(title);
    }
    const products = [...titles.keys()];
    expect(products.length).toBeGreaterThanOrEqual(28);
    expect(latestEverywhere(titles)).toBe(true);
    for (const [index, c] of connections.entries()) {
      const status = converged.statuses[index]!;
      expect(status.status).toBe('ACTIVE');
      expect(status.items).toMatchObject({ synced: products.length, pending: 0, retrying: 0, dead_lettered: 0 });
      expect(status.dead_letters).toEqual([]);
      const items = standIn.items(c.unified);
      const byProduct = new Map<string, string[]>();
      for (const item of items) {
        const ref = referenceOf(item);
        expect(ref, JSON.stringify(item)).toBeDefined();
        byProduct.set(ref!, [...(byProduct.get(ref!) ?? []), item.name]);
      }
      expect([...byProduct.keys()].sort()).toEqual([...products].sort());
      for (const [id, names] of byProduct) expect(names, id).toEqual([titles.get(id)]);
    }
    const convergedMs = Date.now() - restartedAt;

    console.info(
      `crash: killed after ${atKill.created} creates and ${atKill.updates} updates acknowledged (${atKill.unanswered} unanswered), ${before.slowItems} items at the slow platform, ${atKill.pushed} remote items in all; ${products.length} products converged ${convergedMs} ms after restart`,
    );
  });
});
