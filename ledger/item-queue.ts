import type { WorkerContext, WorkerHooks } from './worker.ts';
import { sleep } from './sleep.ts';
import { errorField } from './throttled-log.ts';

/** After a failed item, before its slot takes another (the item itself is taken again on a later round). */
const FAILED_ITEM_PAUSE_MS = 2_000;

export type ItemWork<T> = {
  /** The items to work on, oldest first; `limit` leaves room for those already in hand. */
  queue: (limit: number) => Promise<T[]>;
  keyOf: (item: T) => string;
  /** Works on one item: true once its outcome is recorded, false to take it again later (after a pause). */
  work: (item: T) => Promise<boolean>;
  /**
   * Whose the item is (a tenant): items are then taken round-robin across owners, the one with fewest in hand first,
   * and no owner holds every slot, so another's item starts in the next round however many the first has waiting.
   */
  ownerOf?: (item: T) => string;
};

/**
 * The round of a queue worker that works on up to `atOnce` items side by side and records each outcome as a command.
 * An item whose outcome this process recorded is not taken again while the read model (which may lag) still lists it;
 * one that failed is taken again on a later round.
 */
export class ItemQueue<T> implements Pick<WorkerHooks, 'round' | 'drain' | 'onError'> {
  private readonly working = new Map<string, Promise<void>>();
  /** The owner of each item in hand. */
  private readonly owners = new Map<string, string>();
  private readonly recorded = new Set<string>();

  private readonly context: WorkerContext;
  private readonly component: string;
  private readonly atOnce: number;
  private readonly items: ItemWork<T>;

  constructor(context: WorkerContext, component: string, atOnce: number, items: ItemWork<T>) {
    this.context = context;
    this.component = component;
    this.atOnce = atOnce;
    this.items = items;
  }

  /** The worker's hooks: this queue's round, drain and error log, with the worker's own `others`. */
  hooks(others: Omit<WorkerHooks, 'round' | 'drain' | 'onError'>): WorkerHooks {
    return { ...others, round: this.round, drain: this.drain, onError: this.onError };
  }

  readonly round = async (): Promise<void> => {
    const free = this.atOnce - this.working.size;
    if (free > 0) this.take(await this.items.queue(this.atOnce * 4), free);
  };

  readonly drain = async (): Promise<void> => {
    await Promise.allSettled(this.working.values());
  };

  readonly onError = (error: unknown): void =>
    this.context.throttled.write('warn', 'queue', { err: errorField(error) }, `${this.component} could not read its queue; trying again`);

  private take(items: T[], free: number): void {
    const { keyOf } = this.items;
    const listed = new Set(items.map(keyOf));
    for (const key of this.recorded) if (!listed.has(key)) this.recorded.delete(key);
    const fresh = items.filter((item) => !this.working.has(keyOf(item)) && !this.recorded.has(keyOf(item)));
    for (const item of this.fairly(fresh, free)) {
      const key = keyOf(item);
      const owner = this.items.ownerOf?.(item);
      if (owner !== undefined) this.owners.set(key, owner);
      const done = this.attempt(item, key).finally(() => {
        this.working.delete(key);
        this.owners.delete(key);
        this.context.wake();
      });
      this.working.set(key, done);
    }
  }

  /** Up to `free` of `fresh`, in order, or with owners: the owner with fewest in hand first, none holding every slot. */
  private fairly(fresh: T[], free: number): T[] {
    const { ownerOf } = this.items;
    if (!ownerOf) return fresh.slice(0, free);
    const held = new Map<string, number>();
    for (const owner of this.owners.values()) held.set(owner, (held.get(owner) ?? 0) + 1);
    const most = this.atOnce > 1 ? this.atOnce - 1 : 1;
    const waiting = [...fresh];
    const taken: T[] = [];
    while (taken.length < free) {
      let best = -1;
      for (let i = 0; i < waiting.length; i++) {
        const count = held.get(ownerOf(waiting[i] as T)) ?? 0;
        if (count < most && (best < 0 || count < (held.get(ownerOf(waiting[best] as T)) ?? 0))) best = i;
      }
      if (best < 0) break;
      const [item] = waiting.splice(best, 1) as [T];
      held.set(ownerOf(item), (held.get(ownerOf(item)) ?? 0) + 1);
      taken.push(item);
    }
    return taken;
  }

  private async attempt(item: T, key: string): Promise<void> {
    try {
      if (await this.items.work(item)) {
        this.recorded.add(key);
        return;
      }
    } catch (error) {
      this.context.throttled.write('warn', 'work', { err: errorField(error), key }, `${this.component} was interrupted; it tries again`);
    }
    await sleep(FAILED_ITEM_PAUSE_MS);
  }
}
