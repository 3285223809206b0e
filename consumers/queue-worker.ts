import type { WorkerDeps } from '../ledger/runtime.ts';
import type { Part, PartSignals } from '../ledger/supervisor.ts';
import { errorField, ThrottledLog } from '../ledger/throttled-log.ts';
import { WakeUp } from '../ledger/wake-up.ts';

const IDLE_POLL_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A worker whose queue is a read model: it reads the queue whenever the projection behind it moves (else every 5 s),
 * works on up to `atOnce` items side by side, and records each outcome as a command. An item whose outcome this process
 * recorded is not taken again while the read model (which may lag) still lists it; one that failed is taken again on a
 * later round.
 */
export abstract class QueueWorker<T> implements Part {
  protected stopping = false;
  protected readonly log;
  protected readonly throttled;
  private loop?: Promise<void>;
  private readonly wakeUp = new WakeUp();
  private unsubscribe?: () => void;
  private readonly working = new Map<string, Promise<void>>();
  private readonly recorded = new Set<string>();

  constructor(
    protected readonly deps: WorkerDeps,
    private readonly signals: PartSignals,
    private readonly settings: { component: string; projection: string; atOnce: number },
  ) {
    this.log = deps.logger.child({ component: settings.component });
    this.throttled = new ThrottledLog(this.log);
  }

  /** The items to work on, oldest first; `limit` leaves room for those already in hand. */
  protected abstract queue(limit: number): Promise<T[]>;
  protected abstract keyOf(item: T): string;
  /** Works on one item: true once its outcome is recorded, false to take it again later (after a pause). */
  protected abstract work(item: T): Promise<boolean>;
  protected async opened(): Promise<void> {}
  protected async closed(): Promise<void> {}

  async start(): Promise<void> {
    this.stopping = false;
    await this.opened();
    this.unsubscribe = this.deps.onProgress(this.settings.projection, this.wakeUp.wake);
    this.loop = this.run();
    this.signals.running();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.wakeUp.wake();
    await this.loop;
    await Promise.allSettled(this.working.values());
    await this.closed();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        const free = this.settings.atOnce - this.working.size;
        if (free > 0) this.take(await this.queue(this.settings.atOnce * 4), free);
      } catch (error) {
        this.throttled.write(
          'warn',
          'queue',
          { err: errorField(error) },
          `${this.settings.component} could not read its queue; trying again`,
        );
        await sleep(1_000);
      }
      if (!this.stopping) await this.wakeUp.wait(IDLE_POLL_MS);
    }
  }

  private take(items: T[], free: number): void {
    const listed = new Set(items.map((item) => this.keyOf(item)));
    for (const key of this.recorded) if (!listed.has(key)) this.recorded.delete(key);
    const fresh = items.filter((item) => !this.working.has(this.keyOf(item)) && !this.recorded.has(this.keyOf(item)));
    for (const item of fresh.slice(0, free)) {
      const key = this.keyOf(item);
      const done = this.attempt(item, key).finally(() => {
        this.working.delete(key);
        this.wakeUp.wake();
      });
      this.working.set(key, done);
    }
  }

  private async attempt(item: T, key: string): Promise<void> {
    try {
      if (await this.work(item)) {
        this.recorded.add(key);
        return;
      }
    } catch (error) {
      this.throttled.write('warn', 'work', { err: errorField(error), key }, `${this.settings.component} was interrupted; it tries again`);
    }
    await sleep(2_000);
  }
}
