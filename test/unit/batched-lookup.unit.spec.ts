import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { batchedLookup } from '../../projections/batched-lookup.ts';

type Row = { id: string; tenant_id: string; org_id: string; title: string };

const tenantA = { tenantId: randomUUID(), orgId: randomUUID() };
const tenantB = { tenantId: randomUUID(), orgId: randomUUID() };
const rowOf = (scope: typeof tenantA, title: string): Row => ({ id: randomUUID(), tenant_id: scope.tenantId, org_id: scope.orgId, title });

/** A lookup over `rows` that records the ids of every load. */
function lookupOver(rows: Row[], fails?: (ids: string[]) => boolean) {
  const loads: string[][] = [];
  const find = batchedLookup<Row>(async (_db, ids) => {
    loads.push(ids);
    if (fails?.(ids)) throw new Error('Postgres went away');
    return rows.filter((row) => ids.includes(row.id));
  });
  return { find, loads };
}

const db = {} as Knex;

describe('batchedLookup: reads by id asked in one turn, one statement', () => {
  it('reads every id asked in the same turn in one load, and gives each caller its own row', async () => {
    const [a1, a2, b1] = [rowOf(tenantA, 'a1'), rowOf(tenantA, 'a2'), rowOf(tenantB, 'b1')];
    const { find, loads } = lookupOver([a1, a2, b1]);
    const found = await Promise.all([find(db, tenantA, a1.id), find(db, tenantA, a2.id.toUpperCase()), find(db, tenantB, b1.id)]);
    expect(found.map((row) => row?.title)).toEqual(['a1', 'a2', 'b1']);
    expect(loads).toHaveLength(1);
    expect(new Set(loads[0])).toEqual(new Set([a1.id, a2.id, b1.id]));
  });

  it("never gives a caller another tenant's or org's row, though the load read it", async () => {
    const b1 = rowOf(tenantB, 'b1');
    const { find, loads } = lookupOver([b1]);
    const [theirs, mine] = await Promise.all([
      find(db, tenantA, b1.id),
      find(db, { tenantId: tenantB.tenantId, orgId: tenantA.orgId }, b1.id),
    ]);
    expect(theirs).toBeUndefined();
    expect(mine).toBeUndefined();
    expect(loads).toEqual([[b1.id]]);
    expect((await find(db, { tenantId: tenantB.tenantId.toUpperCase(), orgId: tenantB.orgId }, b1.id))?.title).toBe('b1');
  });

  it('reads asked in later turns in later loads', async () => {
    const [a1, a2] = [rowOf(tenantA, 'a1'), rowOf(tenantA, 'a2')];
    const { find, loads } = lookupOver([a1, a2]);
    expect((await find(db, tenantA, a1.id))?.title).toBe('a1');
    expect((await find(db, tenantA, a2.id))?.title).toBe('a2');
    expect(loads).toEqual([[a1.id], [a2.id]]);
  });

  it('reads an id that is no UUID alone, so it cannot fail the others', async () => {
    const a1 = rowOf(tenantA, 'a1');
    const { find, loads } = lookupOver([a1], (ids) => ids.includes('not-a-uuid'));
    const [bad, good] = await Promise.allSettled([find(db, tenantA, 'not-a-uuid'), find(db, tenantA, a1.id)]);
    expect(bad.status).toBe('rejected');
    expect(good).toEqual({ status: 'fulfilled', value: a1 });
    expect(loads).toEqual(expect.arrayContaining([['not-a-uuid'], [a1.id]]));
  });

  it("fails every caller of a load that fails, and the next turn's load is a fresh one", async () => {
    const a1 = rowOf(tenantA, 'a1');
    let down = true;
    const { find } = lookupOver([a1], () => down);
    const failed = await Promise.allSettled([find(db, tenantA, a1.id), find(db, tenantA, randomUUID())]);
    expect(failed.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    down = false;
    expect(await find(db, tenantA, a1.id)).toEqual(a1);
  });
});
