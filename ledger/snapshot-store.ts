import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { LedgerConfig } from './config.ts';
import { RecentlyUsed } from './recently-used.ts';
import type { KeptRecord, SnapshotKeeper } from './snapshot-keeper.ts';
import type { Snapshot } from './state-store.ts';

/** Address space, not memory: the file grows with what it holds. */
const MAP_BYTES = 256 * 1024 ** 3;
/** Room for every state changelog's database, besides the positions and dictionaries. */
const MAX_DBS = 64;
/** The layout below, kept in a directory of its own: a store of an earlier layout is deleted, not read. */
const FORMAT = 'format-3';
/** A changelog's first values, up to this many bytes, become its compression dictionary. */
const DICTIONARY_BYTES = 4096;
/** Values up to this size are kept as they are. */
const COMPRESSION_THRESHOLD = 64;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Where a key's id starts: after its partition's four bytes and the id's kind. */
const ID_AT = 5;
const AS_UUID = 0;
const AS_TEXT = 1;

/** A key's first four bytes: its partition plus one, so that the unpartitioned -1 has a place. */
const writePartition = (key: Buffer, partition: number) => key.writeUInt32BE(partition + 1, 0);

/** The hex groups of a UUID's text: where each starts and ends, and where its bytes go in the key. */
const UUID_PARTS = [
  [0, 8, ID_AT],
  [9, 13, ID_AT + 4],
  [14, 18, ID_AT + 6],
  [19, 23, ID_AT + 8],
  [24, 36, ID_AT + 10],
] as const;

/**
 * An aggregate's key in its changelog's database: the partition's four bytes first (a partition's keys are one range),
 * then a lowercase UUID as its 16 bytes or any other id as its UTF-8 text, each after a byte of its own kind. Why: most
 * ids are UUIDs, and their 36 characters (40 bytes as an ordered-binary array) made a quarter of a product's entry.
 */
export function snapshotKey(partition: number, aggregateId: string): Buffer {
  const uuid = UUID.test(aggregateId);
  const key = Buffer.allocUnsafe(ID_AT + (uuid ? 16 : Buffer.byteLength(aggregateId)));
  writePartition(key, partition);
  key[4] = uuid ? AS_UUID : AS_TEXT;
  if (!uuid) key.write(aggregateId, ID_AT, 'utf8');
  else for (const [from, to, at] of UUID_PARTS) key.write(aggregateId.slice(from, to), at, 'hex');
  return key;
}

/** The keys of one partition: from its first key up to the next partition's. */
const partitionRange = (partition: number) => {
  const bound = (p: number) => {
    const key = Buffer.alloc(4);
    writePartition(key, p);
    return key;
  };
  return { start: bound(partition), end: bound(partition + 1) };
};

/** The first values of a changelog's records, the sample its dictionary is made of (none: no value among them). */
export function dictionarySample(records: KeptRecord<unknown>[]): Buffer | undefined {
  const values: Buffer[] = [];
  let size = 0;
  for (const [, value] of records) {
    if (!value || size >= DICTIONARY_BYTES) continue;
    values.push(value);
    size += value.length;
  }
  return values.length > 0 ? Buffer.concat(values).subarray(0, DICTIONARY_BYTES) : undefined;
}

/**
 * One process's local state store (LMDB): per state changelog and partition, the latest snapshot of each aggregate as
 * its JSON record, and the changelog offset the partition reflects, written in one LMDB transaction, so the store is
 * never ahead of what it holds. It is a cache of the compacted changelog (the source of truth): an assignment reads
 * only the changelog's tail past the recorded offset, and the store can be deleted at any time.
 *
 * Each changelog has a database of its own, its values LZ4-compressed with a dictionary made of the first values the
 * store kept for it. Why: every page of the file is touched by random-key inserts, so the file's size is the store's
 * part of the process's RSS; a snapshot repeats its changelog's field names, its owner's ids and often its request's,
 * and a dictionary of real snapshots takes a product's 600 bytes to about 100 (lmdb-js's built-in JSON dictionary took
 * off a twentieth).
 */
export class StateStore {
  private readonly root: RootDatabase;
  private readonly positions: Database<string, [string, number]>;
  private readonly dictionaries: Database<Buffer, string>;
  private readonly opened = new Map<string, Database<Buffer, Buffer>>();

  readonly path: string;
  private readonly cacheSize: number;

  constructor(path: string, cacheSize: number) {
    this.path = path;
    this.cacheSize = cacheSize;

    mkdirSync(join(path, FORMAT), { recursive: true });
    // A store of an earlier layout: the first kept its files here, later ones in a directory named by their layout.
    for (const entry of readdirSync(path)) {
      if (entry === 'data.mdb' || entry === 'lock.mdb' || (entry.startsWith('format-') && entry !== FORMAT)) {
        rmSync(join(path, entry), { recursive: true, force: true });
      }
    }
    // A cache: a machine's crash may lose the last transactions, never the changelog; a lost write is read again.
    // One mapping of the whole address range up front: grown by doubling instead, lmdb-js keeps every earlier mapping,
    // and a page resident in several of them is counted that many times in RSS (a 1.8 GB store showed 4.9 GB of RssFile).
    this.root = open({ path: join(path, FORMAT), noSync: true, maxDbs: MAX_DBS, mapSize: MAP_BYTES });
    this.positions = this.root.openDB({ name: 'positions', encoding: 'string' });
    this.dictionaries = this.root.openDB({ name: 'dictionaries', encoding: 'binary' });
  }

  /**
   * A changelog's database, once it has a dictionary (undefined: the store has kept nothing of it yet; with `sample`,
   * the dictionary is made of it), opened once for every keeper of the changelog.
   */
  private snapshotsOf(topic: string, sample?: Buffer): Database<Buffer, Buffer> | undefined {
    const open = this.opened.get(topic);
    if (open) return open;
    let dictionary = this.dictionaries.get(topic);
    if (!dictionary && sample) {
      this.dictionaries.putSync(topic, sample);
      dictionary = sample;
    }
    if (!dictionary) return undefined;
    const snapshots = this.root.openDB<Buffer, Buffer>({
      name: `snapshots:${topic}`,
      encoding: 'binary',
      keyEncoding: 'binary',
      compression: { dictionary: Buffer.from(dictionary), threshold: COMPRESSION_THRESHOLD },
    });
    this.opened.set(topic, snapshots);
    return snapshots;
  }

  /** The snapshots of one state changelog topic. */
  keeper<S>(topic: string): SnapshotKeeper<S> {
    const { root, positions } = this;
    // Another keeper of the changelog may make its database first.
    const snapshotsNow = () => this.snapshotsOf(topic);
    // Its dictionary made of these records if the changelog has none yet (the sample only built then).
    const databaseFor = (records: KeptRecord<S>[]) => snapshotsNow() ?? this.snapshotsOf(topic, dictionarySample(records));
    // Parsed snapshots in front of the store, the most recently used kept.
    const recent = new RecentlyUsed<Snapshot<S>>(this.cacheSize);
    const cacheKey = (partition: number, aggregateId: string) => `${partition}/${aggregateId}`;
    return {
      get(partition, aggregateId) {
        const key = cacheKey(partition, aggregateId);
        const cached = recent.get(key);
        if (cached) return cached;
        const value = snapshotsNow()?.get(snapshotKey(partition, aggregateId));
        if (!value) return undefined;
        const snapshot = JSON.parse(value.toString()) as Snapshot<S>;
        recent.set(key, snapshot);
        return snapshot;
      },
      apply(partition, records, next) {
        const kept = databaseFor(records);
        root.transactionSync(() => {
          for (const [aggregateId, value, snapshot] of records) {
            if (value) kept?.putSync(snapshotKey(partition, aggregateId), value);
            else kept?.removeSync(snapshotKey(partition, aggregateId));
            // Without a parsed snapshot at hand the key is only forgotten.
            if (snapshot) recent.set(cacheKey(partition, aggregateId), snapshot);
            else recent.delete(cacheKey(partition, aggregateId));
          }
          if (next !== undefined) positions.putSync([topic, partition], next.toString());
        });
      },
      position(partition) {
        const next = positions.get([topic, partition]);
        return next === undefined ? undefined : BigInt(next);
      },
      clear(partition) {
        root.transactionSync(() => {
          positions.removeSync([topic, partition]);
          const snapshots = snapshotsNow();
          for (const key of snapshots?.getKeys(partitionRange(partition)) ?? []) snapshots?.removeSync(key);
        });
        recent.deletePrefixed(`${partition}/`);
      },
      release(partition) {
        recent.deletePrefixed(`${partition}/`);
      },
    };
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}

/** One store per instance: two instances on one machine differ by their port. */
export const stateStorePath = (config: Pick<LedgerConfig, 'STATE_DIR' | 'LEDGER_NAMESPACE' | 'PORT'>): string =>
  resolve(config.STATE_DIR, `${config.LEDGER_NAMESPACE || 'default'}-${config.PORT}`);
