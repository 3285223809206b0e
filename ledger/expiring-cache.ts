import { RecentlyUsed } from './recently-used.ts';

type Entry<V> = { value: V; loadedAt: number };

/**
 * What `load` answers for a key, kept `ttlMs` (at most `entries` keys, least recently used out). `forget()` drops
 * everything at once, and a load that began before it stores nothing: its answer may predate the change that
 * called for the forgetting.
 */
export class ExpiringCache<V> {
  private readonly entries: RecentlyUsed<Entry<V>>;
  private readonly loading = new Map<string, Promise<V>>();
  private generation = 0;

  private readonly load: (key: string) => Promise<V>;
  private readonly bounds: { ttlMs: number; entries: number };
  private readonly now: () => number;

  constructor(load: (key: string) => Promise<V>, bounds: { ttlMs: number; entries: number }, now: () => number = Date.now) {
    this.load = load;
    this.bounds = bounds;
    this.now = now;

    this.entries = new RecentlyUsed(bounds.entries);
  }

  get(key: string): Promise<V> {
    const found = this.entries.get(key);
    if (found !== undefined && this.now() - found.loadedAt < this.bounds.ttlMs) return Promise.resolve(found.value);
    return this.loading.get(key) ?? this.loadOnce(key);
  }

  forget(): void {
    this.generation++;
    this.loading.clear();
    this.entries.clear();
  }

  private loadOnce(key: string): Promise<V> {
    const generation = this.generation;
    const loadedAt = this.now();
    const loaded = this.load(key).then((value) => {
      if (generation === this.generation) this.entries.set(key, { value, loadedAt });
      return value;
    });
    this.loading.set(key, loaded);
    const settled = () => {
      if (this.loading.get(key) === loaded) this.loading.delete(key);
    };
    loaded.then(settled, settled);
    return loaded;
  }
}
