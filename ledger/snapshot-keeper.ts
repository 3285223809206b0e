import type { Snapshot } from './state-store.ts';

// Apart from the LMDB store (snapshot-store.ts), which only the processor thread opens: the main thread never loads lmdb.

/** A changelog record as kept: the aggregate's id, its JSON value (null: a tombstone) and, when at hand, the parsed snapshot. */
export type KeptRecord<S> = [aggregateId: string, value: Buffer | null, snapshot?: Snapshot<S>];

/** Where a state changelog's snapshots are looked up and kept, per partition. */
export type SnapshotKeeper<S> = {
  get(partition: number, aggregateId: string): Snapshot<S> | undefined;
  /**
   * Applies changelog records of one partition in offset order (`null`: a tombstone). `next`: the changelog offset the
   * partition is known to reflect once they are applied (undefined: unknown, the recorded position stays).
   */
  apply(partition: number, records: KeptRecord<S>[], next?: bigint): void;
  /** The changelog offset from which this partition must be read again; undefined: from its beginning. */
  position(partition: number): bigint | undefined;
  /** Forgets a partition (no longer owned, or its kept state no longer matches the changelog). */
  clear(partition: number): void;
  /** Drops the partition from memory only: what is kept on disk stays for the next time it is assigned. */
  release(partition: number): void;
};

/** Every snapshot in memory: the changelog is read from its beginning at each assignment. */
export class MemorySnapshots<S> implements SnapshotKeeper<S> {
  private readonly partitions = new Map<number, Map<string, Snapshot<S>>>();

  get(partition: number, aggregateId: string): Snapshot<S> | undefined {
    return this.partitions.get(partition)?.get(aggregateId);
  }

  apply(partition: number, records: KeptRecord<S>[]): void {
    const snapshots = this.partitions.get(partition) ?? new Map<string, Snapshot<S>>();
    this.partitions.set(partition, snapshots);
    for (const [aggregateId, value, snapshot] of records) {
      if (value) snapshots.set(aggregateId, snapshot ?? (JSON.parse(value.toString()) as Snapshot<S>));
      else snapshots.delete(aggregateId);
    }
  }

  position(): bigint | undefined {
    return undefined;
  }

  clear(partition: number): void {
    this.partitions.delete(partition);
  }

  release(partition: number): void {
    this.clear(partition);
  }
}
