import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemorySnapshots, type KeptRecord } from '../../ledger/snapshot-keeper.ts';
import { dictionarySample, snapshotKey, StateStore } from '../../ledger/snapshot-store.ts';
import type { Snapshot } from '../../ledger/state-store.ts';

type Counter = { count: number };
const snapshot = (count: number, tenantId = 't1'): Snapshot<Counter> => ({
  owner: { tenantId, orgId: 'o1' },
  state: { count },
  version: count,
});
const record = (id: string, value: Snapshot<Counter> | null): KeptRecord<Counter> => [
  id,
  value ? Buffer.from(JSON.stringify(value)) : null,
];

const dirs: string[] = [];
const stores: StateStore[] = [];
const openStore = (path = mkdtempSync(join(tmpdir(), 'state-store-')), cacheSize = 2) => {
  dirs.push(path);
  const store = new StateStore(path, cacheSize);
  stores.push(store);
  return store;
};

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the LMDB state store', () => {
  it('keeps snapshots and the changelog position of each partition together, past a reopen', async () => {
    const first = openStore();
    const products = first.keeper<Counter>('ns.products.state');
    expect(products.position(0)).toBeUndefined();
    products.apply(0, [record('a', snapshot(1)), record('b', snapshot(2))], 7n);
    products.apply(1, [record('c', snapshot(3))], 3n);
    products.apply(0, [record('a', snapshot(4)), record('b', null)], 10n);
    await first.close();
    stores.splice(0);

    const again = openStore(dirs[0]).keeper<Counter>('ns.products.state');
    expect(again.get(0, 'a')).toEqual(snapshot(4));
    expect(again.get(0, 'b')).toBeUndefined();
    expect(again.get(1, 'c')).toEqual(snapshot(3));
    expect(again.get(0, 'c')).toBeUndefined();
    expect([again.position(0), again.position(1), again.position(2)]).toEqual([10n, 3n, undefined]);
  });

  it('leaves the position where it was when a write does not know it', () => {
    const keeper = openStore().keeper<Counter>('ns.x.state');
    keeper.apply(0, [record('a', snapshot(1))], 5n);
    keeper.apply(0, [record('a', snapshot(2))]);
    expect(keeper.position(0)).toBe(5n);
    expect(keeper.get(0, 'a')).toEqual(snapshot(2));
  });

  it('clears one partition of one changelog, and nothing else', () => {
    const store = openStore();
    const products = store.keeper<Counter>('ns.products.state');
    const orders = store.keeper<Counter>('ns.orders.state');
    products.apply(0, [record('a', snapshot(1))], 2n);
    products.apply(1, [record('b', snapshot(2))], 2n);
    orders.apply(0, [record('a', snapshot(9))], 4n);
    products.clear(0);
    expect(products.get(0, 'a')).toBeUndefined();
    expect(products.position(0)).toBeUndefined();
    expect(products.get(1, 'b')).toEqual(snapshot(2));
    expect(orders.get(0, 'a')).toEqual(snapshot(9));
    expect(orders.position(0)).toBe(4n);
  });

  it('reads from disk what its bounded cache no longer holds, and keeps a released partition on disk', () => {
    const keeper = openStore(undefined, 2).keeper<Counter>('ns.products.state');
    keeper.apply(
      0,
      Array.from({ length: 50 }, (_, i) => [`p${i}`, Buffer.from(JSON.stringify(snapshot(i))), snapshot(i)] as KeptRecord<Counter>),
      50n,
    );
    for (let i = 0; i < 50; i++) expect(keeper.get(0, `p${i}`)?.state.count).toBe(i);
    keeper.release(0);
    expect(keeper.get(0, 'p7')).toEqual(snapshot(7));
    expect(keeper.position(0)).toBe(50n);
  });

  it('answers the latest write even for a key its cache held before', () => {
    const keeper = openStore(undefined, 10).keeper<Counter>('ns.products.state');
    keeper.apply(0, [['a', Buffer.from(JSON.stringify(snapshot(1))), snapshot(1)]], 1n);
    expect(keeper.get(0, 'a')).toEqual(snapshot(1));
    keeper.apply(0, [record('a', snapshot(2))], 2n);
    expect(keeper.get(0, 'a')).toEqual(snapshot(2));
    keeper.apply(0, [record('a', null)], 3n);
    expect(keeper.get(0, 'a')).toBeUndefined();
  });
  it("keeps a changelog's values compressed with a dictionary of its first values, readable after a reopen", async () => {
    type Product = { title: string; description: string; sku: string };
    const product = (i: number): Snapshot<Product> => ({
      owner: { tenantId: '7b0c7a52-2f3e-4a43-9f0e-5b1a8e2d6c11', orgId: 'c3d0e6f4-81a2-4b7c-a9d5-0e2f6b8c4a73' },
      state: { title: `Product ${i}`, description: 'A product of the catalog, with a description of some length to it', sku: `SKU-${i}` },
      version: 1,
      requests: {
        [`bulk:0f6e2d4c-3b1a-4e8f-9c7d-5a2b1e0f3d64:${i}`]: { hash: '0f6e2d4c-3b1a-4e8f-9c7d-5a2b1e0f3d64', at: 1_764_320_000_000 + i },
      },
    });
    const path = mkdtempSync(join(tmpdir(), 'state-store-'));
    const first = openStore(path);
    const keeper = first.keeper<Product>('ns.products.state');
    const values = Array.from({ length: 5_000 }, (_, i) => Buffer.from(JSON.stringify(product(i))));
    for (let i = 0; i < values.length; i += 500) {
      keeper.apply(
        0,
        values.slice(i, i + 500).map((value, j) => [`p${i + j}`, value] as KeptRecord<Product>),
        BigInt(i + 500),
      );
    }
    await first.close();
    stores.splice(0);
    const raw = values.reduce((sum, value) => sum + value.length, 0);
    expect(statSync(join(path, 'format-3', 'data.mdb')).size).toBeLessThan(raw / 2);

    const again = openStore(path, 0).keeper<Product>('ns.products.state');
    for (const i of [0, 1, 2_499, 4_999]) expect(again.get(0, `p${i}`)).toEqual(product(i));
    expect(again.position(0)).toBe(5_000n);
  });

  it('keeps the position of a changelog of which it has seen only tombstones, and a dictionary once values come', () => {
    const keeper = openStore().keeper<Counter>('ns.x.state');
    keeper.apply(0, [record('a', null)], 1n);
    expect(keeper.position(0)).toBe(1n);
    expect(keeper.get(0, 'a')).toBeUndefined();
    keeper.apply(0, [record('a', snapshot(3))], 2n);
    keeper.release(0);
    expect(keeper.get(0, 'a')).toEqual(snapshot(3));
  });

  it('reads in one keeper what another keeper of the same changelog kept first', () => {
    const store = openStore();
    const reader = store.keeper<Counter>('ns.products.state');
    const writer = store.keeper<Counter>('ns.products.state');
    expect(reader.get(0, 'a')).toBeUndefined();
    writer.apply(0, [record('a', snapshot(1))], 1n);
    expect(reader.get(0, 'a')).toEqual(snapshot(1));
    reader.apply(0, [record('b', snapshot(2))], 2n);
    writer.release(0);
    expect(writer.get(0, 'b')).toEqual(snapshot(2));
  });

  it('deletes a store of an earlier layout rather than reading it', () => {
    const path = mkdtempSync(join(tmpdir(), 'state-store-'));
    writeFileSync(join(path, 'data.mdb'), 'a store of the first layout');
    writeFileSync(join(path, 'lock.mdb'), '');
    mkdirSync(join(path, 'format-2'));
    writeFileSync(join(path, 'format-2', 'data.mdb'), 'a store of the second layout');
    const keeper = openStore(path).keeper<Counter>('ns.products.state');
    for (const earlier of ['data.mdb', 'lock.mdb', 'format-2']) expect(existsSync(join(path, earlier))).toBe(false);
    expect(existsSync(join(path, 'format-3', 'data.mdb'))).toBe(true);
    expect(keeper.position(0)).toBeUndefined();
  });

  it('keys a UUID by its 16 bytes and any other id by its text, each after its partition', () => {
    const id = '0f6e2d4c-3b1a-4e8f-9c7d-5a2b1e0f3d64';
    expect(snapshotKey(2, id).toString('hex')).toBe(`0000000300${id.replace(/-/g, '')}`);
    expect(snapshotKey(-1, 'sku/A-1')).toEqual(Buffer.concat([Buffer.from([0, 0, 0, 0, 1]), Buffer.from('sku/A-1')]));
    // An id that only looks like a UUID keeps its own text, so two spellings stay two aggregates.
    expect(snapshotKey(0, id.toUpperCase()).subarray(5).toString()).toBe(id.toUpperCase());
    expect(snapshotKey(0, `${id}x`)[4]).toBe(1);
  });

  it('keeps UUID, text and unpartitioned ids apart, and clears only the partition named', () => {
    const store = openStore();
    const keeper = store.keeper<Counter>('ns.products.state');
    const id = '7b0c7a52-2f3e-4a43-9f0e-5b1a8e2d6c11';
    keeper.apply(0, [record(id, snapshot(1)), record('text-id', snapshot(2)), record(id.toUpperCase(), snapshot(3))], 3n);
    keeper.apply(1, [record(id, snapshot(4))], 1n);
    keeper.apply(-1, [record(id, snapshot(5))]);
    keeper.release(0);
    keeper.release(1);
    keeper.release(-1);
    expect([keeper.get(0, id), keeper.get(0, 'text-id'), keeper.get(0, id.toUpperCase())]).toEqual([snapshot(1), snapshot(2), snapshot(3)]);
    expect([keeper.get(1, id), keeper.get(-1, id)]).toEqual([snapshot(4), snapshot(5)]);
    keeper.clear(0);
    expect([keeper.get(0, id), keeper.get(0, 'text-id'), keeper.get(0, id.toUpperCase())]).toEqual([undefined, undefined, undefined]);
    expect([keeper.get(1, id), keeper.get(-1, id)]).toEqual([snapshot(4), snapshot(5)]);
  });

  it('makes a dictionary of the first values, up to 4 kB, and none of tombstones', () => {
    expect(dictionarySample([['a', null]])).toBeUndefined();
    const sample = dictionarySample([
      ['a', null],
      ['b', Buffer.from('first')],
      ['c', Buffer.alloc(5_000, 'x')],
      ['d', Buffer.from('never')],
    ]);
    expect(sample?.length).toBe(4_096);
    expect(sample?.subarray(0, 6).toString()).toBe('firstx');
  });
});

describe('snapshots in memory', () => {
  it('hold what was applied, per partition, and forget a released partition', () => {
    const keeper = new MemorySnapshots<Counter>();
    keeper.apply(0, [record('a', snapshot(1)), record('b', snapshot(2))]);
    keeper.apply(0, [record('b', null)]);
    keeper.apply(1, [record('a', snapshot(5))]);
    expect([keeper.get(0, 'a'), keeper.get(0, 'b'), keeper.get(1, 'a')]).toEqual([snapshot(1), undefined, snapshot(5)]);
    expect(keeper.position()).toBeUndefined();
    keeper.release(0);
    expect(keeper.get(0, 'a')).toBeUndefined();
  });
});
