import type { Logger } from './logger.ts';
import { sleep } from './sleep.ts';
import { errorField, failureKind, ThrottledLog } from './throttled-log.ts';

/** A long-running part of the runtime (a processor, router, projection runner, the edge's reply reader). */
export type Part = {
  /** Creates its clients afresh each time, so a part can be started again after it failed. */
  start: () => Promise<void>;
  stop: () => Promise<void>;
};

/** How a part tells its supervisor what became of it. */
export type PartSignals = {
  /** Consuming: joined its group with partitions assigned. */
  running: () => void;
  /** Broken beyond in-place retries (a crashed consumer, a producer in an unusable state): restart me. */
  failed: (error: unknown) => void;
};

export type PartState = 'starting' | 'running' | 'restarting' | 'stopped';
export type PartStatus = { name: string; state: PartState; restarts: number; lastFailureAt: number; lastError?: string };

export type SupervisorOptions = { minDelayMs?: number; maxDelayMs?: number; stableAfterMs?: number; stopTimeoutMs?: number };

/** Exponential backoff with jitter: attempt 0 waits about `min`, each further one twice as long, never more than `max`. */
export const backoffDelay = (attempt: number, min: number, max: number, random: () => number = Math.random): number => {
  const ceiling = Math.min(max, min * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
};

const withTimeout = <T>(work: Promise<T>, ms: number): Promise<T | undefined> => Promise.race([work, sleep(ms).then(() => undefined)]);

/**
 * Keeps one part alive: when it fails it is stopped and started again with backoff, for as long as the service runs,
 * so a broker or database outage heals without a restart of the process.
 */
export class Supervisor implements PartSignals {
  private part?: Part;
  private state: PartState = 'stopped';
  private restarts = 0;
  private attempt = 0;
  private runningSince = 0;
  private lastFailureAt = 0;
  private lastError?: string;
  private restarting?: Promise<void>;
  /** A failure of the incarnation a restart is starting (not of the one it stopped) restarts it once more. */
  private failedWhileStarting?: unknown;
  private starting = false;
  private stopped = false;
  private readonly throttled: ThrottledLog;
  private readonly options: Required<SupervisorOptions>;

  readonly name: string;

  constructor(name: string, log: Logger, options: SupervisorOptions = {}) {
    this.name = name;

    this.throttled = new ThrottledLog(log.child({ component: name }));
    this.options = { minDelayMs: 200, maxDelayMs: 5_000, stableAfterMs: 30_000, stopTimeoutMs: 10_000, ...options };
  }

  /** The first start is the caller's to await: a service that cannot start at all says so at once. */
  async start(part: Part): Promise<void> {
    this.part = part;
    this.stopped = false;
    this.state = 'starting';
    await part.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.restarting;
    this.state = 'stopped';
    await this.part?.stop();
  }

  running(): void {
    if (this.stopped) return;
    if (this.state !== 'running') this.runningSince = Date.now();
    this.state = 'running';
  }

  failed(error: unknown): void {
    this.lastError = errorField(error).message;
    this.lastFailureAt = Date.now();
    if (this.stopped) return;
    if (this.restarting) {
      if (this.starting) this.failedWhileStarting = error;
      return;
    }
    if (this.state === 'running' && Date.now() - this.runningSince >= this.options.stableAfterMs) this.attempt = 0;
    this.state = 'restarting';
    this.throttled.write('error', `failed:${failureKind(error)}`, { err: errorField(error) }, `${this.name} failed; restarting it`);
    this.restarting = this.restart().finally(() => {
      this.restarting = undefined;
      const again = this.failedWhileStarting;
      this.failedWhileStarting = undefined;
      if (again !== undefined) this.failed(again);
    });
  }

  status(): PartStatus {
    return {
      name: this.name,
      state: this.state,
      restarts: this.restarts,
      lastFailureAt: this.lastFailureAt,
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  private async restart(): Promise<void> {
    const part = this.part;
    if (!part) return;
    await withTimeout(
      part.stop().catch(() => undefined),
      this.options.stopTimeoutMs,
    );
    while (!this.stopped) {
      await sleep(backoffDelay(this.attempt++, this.options.minDelayMs, this.options.maxDelayMs));
      if (this.stopped) return;
      this.state = 'starting';
      this.starting = true;
      try {
        await part.start();
        this.restarts++;
        return;
      } catch (error) {
        this.starting = false;
        this.failedWhileStarting = undefined;
        this.lastError = errorField(error).message;
        this.state = 'restarting';
        this.throttled.write(
          'warn',
          `start:${failureKind(error)}`,
          { err: errorField(error), attempt: this.attempt },
          `${this.name} could not start yet`,
        );
        await withTimeout(
          part.stop().catch(() => undefined),
          this.options.stopTimeoutMs,
        );
      } finally {
        this.starting = false;
      }
    }
  }
}
