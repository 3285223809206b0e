import pg from 'pg';
import type { Knex } from 'knex';
import type { Logger } from './logger.ts';
import type { LogPosition } from './message.ts';
import { liveSchema, type Projection } from './projection.ts';
import { KEYS_CHANNEL, PROGRESS_CHANNEL } from './projection-runner.ts';
import { backoffDelay } from './supervisor.ts';
import { errorField, ThrottledLog } from './throttled-log.ts';
import { namespaced } from './topics.ts';

export class ProjectionLagError extends Error {}

type Waiter = { key: string; offset: bigint; resolve: () => void; reject: (error: Error) => void };
/** `key`: read again only on news of this await key (lower case); without one, on every progress of the projection. */
type Watch = { projection: string; key?: string; recheck: () => void; reject: (error: Error) => void };

/**
 * `key`: the await key the outcome is announced under (`Projection.awaitKeyOf`, an order's id), if the projection has
 * them; `after`: where the write's own events are: the outcome, later in the log, cannot be read before the projection
 * has applied them, so the first read waits for that.
 */
export type OutcomeWait = { key?: string; after?: LogPosition[] };

/**
 * Read-your-writes: resolves once every projection that reads a topic has checkpointed past the
 * offsets a command produced. Progress arrives by LISTEN/NOTIFY from the runners' own transactions;
 * when the listening connection is lost it reconnects with backoff and re-reads the checkpoints, so no
 * progress made meanwhile is missed.
 */
export class ProjectionWaiter {
  private readonly applied = new Map<string, bigint>();
  private waiters: Waiter[] = [];
  private watches: Watch[] = [];
  private progressListeners: { projection: string; listener: (topic: string) => void }[] = [];
  private client?: pg.Client;
  private stopped = false;
  private attempt = 0;
  private reconnectTimer?: NodeJS.Timeout;
  private readonly throttled: ThrottledLog;

  private readonly databaseUrl: string;
  private readonly db: Knex;
  private readonly projections: readonly Projection[];
  private readonly namespace: string;

  constructor(databaseUrl: string, db: Knex, projections: readonly Projection[], namespace: string, log: Logger) {
    this.databaseUrl = databaseUrl;
    this.db = db;
    this.projections = projections;
    this.namespace = namespace;

    this.throttled = new ThrottledLog(log.child({ component: 'projection-waiter' }));
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.listen();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** Whether progress is being heard (readiness). */
  listening(): boolean {
    return this.client !== undefined;
  }

  /** Every write still waiting for its read model gets `error` now (Postgres went away: it would only time out). */
  failAll(error: Error): void {
    const waiters = this.waiters;
    const watches = this.watches;
    this.waiters = [];
    this.watches = [];
    for (const waiter of waiters) waiter.reject(error);
    for (const watch of watches) watch.reject(error);
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 2_000 });
    client.on('notification', ({ channel, payload }) => {
      if (!payload) return;
      if (channel === KEYS_CHANNEL) return this.keysApplied(payload);
      const [projection, topic, partition, offset] = payload.split('|');
      if (projection && topic && partition && offset) this.advance(`${projection}|${topic}|${partition}`, BigInt(offset));
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`listen ${PROGRESS_CHANNEL}; listen ${KEYS_CHANNEL}`);
      this.client = client;
      // Listen first, then read what is already applied, so that no progress falls in between.
      await this.catchUp();
      this.attempt = 0;
    } catch (error) {
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      throw error;
    }
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.client !== client || this.stopped) return;
    this.client = undefined;
    this.throttled.write('error', 'lost', { err: errorField(error) }, 'progress listener lost its connection; reconnecting');
    client.end().catch(() => undefined);
    this.reconnect();
  }

  private reconnect(): void {
    if (this.stopped) return;
    this.reconnectTimer = setTimeout(
      () => {
        this.listen().catch((error: unknown) => {
          this.throttled.write('warn', 'reconnect', { err: errorField(error) }, 'progress listener could not reconnect yet');
          this.reconnect();
        });
      },
      backoffDelay(this.attempt++, 200, 5_000),
    );
  }

  private async catchUp(): Promise<void> {
    for (const projection of this.projections) {
      const rows = (await this.db(`${liveSchema(projection)}.checkpoints`).select('topic', 'partition', 'offset')) as {
        topic: string;
        partition: number;
        offset: string;
      }[];
      for (const row of rows) this.advance(`${projection.name}|${row.topic}|${row.partition}`, BigInt(row.offset));
    }
    for (const watch of this.watches) watch.recheck();
  }

  async waitFor(positions: LogPosition[], timeoutMs: number): Promise<void> {
    const targets = positions.flatMap((position) =>
      this.projections
        .filter((projection) =>
          (projection.awaitedOn ?? projection.topics).some((t) => namespaced(this.namespace, t.name) === position.topic),
        )
        .map((projection) => ({ key: `${projection.name}|${position.topic}|${position.partition}`, offset: BigInt(position.offset) })),
    );
    const mine: Waiter[] = [];
    const pending = targets.map(({ key, offset }) => {
      if ((this.applied.get(key) ?? -1n) >= offset) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const waiter = { key, offset, resolve, reject };
        mine.push(waiter);
        this.waiters.push(waiter);
      });
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ProjectionLagError('the read model has not caught up with this write yet')), timeoutMs);
    });
    try {
      await Promise.race([Promise.all(pending), timeout]);
    } finally {
      clearTimeout(timer);
      this.waiters = this.waiters.filter((waiter) => !mine.includes(waiter));
    }
  }

  /**
   * Resolves with the first non-undefined result of `read`, which runs now and again after every progress of the
   * projection; for outcomes decided later in the log than the command's own events. With `wait.key` (and a projection
   * that announces keys) it runs again only when the projection applied events of that key; with `wait.after`, its
   * first run waits until the projection has applied those positions.
   */
  async waitUntil<T>(projection: string, read: () => Promise<T | undefined>, timeoutMs: number, wait: OutcomeWait = {}): Promise<T> {
    const keyed = this.projections.some((p) => p.name === projection && p.awaitKeyOf !== undefined);
    const key = keyed ? wait.key?.toLowerCase() : undefined;
    let watch: Watch | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await new Promise<T>((resolve, reject) => {
        let running = false;
        let again = false;
        const recheck = () => {
          if (running) {
            again = true;
            return;
          }
          running = true;
          again = false;
          read().then((value) => {
            running = false;
            if (value !== undefined) resolve(value);
            else if (again) recheck();
          }, reject);
        };
        watch = { projection, ...(key !== undefined ? { key } : {}), recheck, reject };
        this.watches.push(watch);
        timer = setTimeout(() => reject(new ProjectionLagError('the read model has not shown the outcome yet')), timeoutMs);
        // Not applied yet as far as the notices say: a notice still on its way, or the applying, brings news of the key.
        if (key === undefined || this.reached(projection, wait.after ?? [])) recheck();
      });
    } finally {
      clearTimeout(timer);
      this.watches = this.watches.filter((w) => w !== watch);
    }
  }

  /** Whether the projection's announced checkpoints have reached every one of `positions`. */
  private reached(projection: string, positions: LogPosition[]): boolean {
    return positions.every(
      ({ topic, partition, offset }) => (this.applied.get(`${projection}|${topic}|${partition}`) ?? -1n) >= BigInt(offset),
    );
  }

  /** A keys notice: the watches waiting under one of its keys read again. */
  private keysApplied(payload: string): void {
    const separator = payload.indexOf('|');
    const projection = payload.slice(0, separator);
    const keys = new Set(payload.slice(separator + 1).split(','));
    for (const watch of this.watches)
      if (watch.projection === projection && watch.key !== undefined && keys.has(watch.key)) watch.recheck();
  }

  /**
   * Calls `listener` whenever the live projection applies more of the log, with the topic it applied more of; the
   * returned function unsubscribes.
   */
  onProgress(projection: string, listener: (topic: string) => void): () => void {
    const entry = { projection, listener };
    this.progressListeners.push(entry);
    return () => {
      this.progressListeners = this.progressListeners.filter((e) => e !== entry);
    };
  }

  private advance(key: string, offset: bigint): void {
    if ((this.applied.get(key) ?? -1n) >= offset) return;
    this.applied.set(key, offset);
    const [projection = '', topic = ''] = key.split('|');
    for (const { listener } of this.progressListeners.filter((e) => e.projection === projection)) listener(topic);
    for (const watch of this.watches) if (watch.projection === projection && watch.key === undefined) watch.recheck();
    const reached = (w: Waiter) => w.key === key && w.offset <= offset;
    const ready = this.waiters.filter(reached);
    this.waiters = this.waiters.filter((w) => !reached(w));
    for (const waiter of ready) waiter.resolve();
  }
}
