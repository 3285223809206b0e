import { quietKafka, type Admin } from './kafka.ts';
import pg from 'pg';
import type { Logger } from './logger.ts';
import { errorField } from './throttled-log.ts';

export type DependencyName = 'kafka' | 'registry' | 'postgres';
export type DependencyCheck = { ok: boolean; since: string; error?: string };

/** A request that needs a dependency known to be down: refused at once (503 with Retry-After) instead of waiting it out. */
export class UnavailableError extends Error {
  readonly dependency: DependencyName | 'ledger';

  constructor(dependency: DependencyName | 'ledger') {
    super(dependency === 'ledger' ? 'the ledger is unavailable; retry later' : `${dependency} is unavailable; retry later`);
    this.dependency = dependency;

    this.name = 'UnavailableError';
  }
}

type Probe = () => Promise<void>;
type State = { up: boolean; since: number; error?: string; failures: number };

const PROBE_TIMEOUT_MS = 1_500;
/**
 * A dependency that refuses the connection is down at once; one that is only slow to answer must miss this many
 * probes in a row: on a busy machine a probe can wait its turn past the timeout while the dependency is fine, and
 * a circuit that opens on that refuses writes that would have succeeded.
 */
const SLOW_PROBES_TO_DOWN = 3;

/** Whether the dependency is certainly not there (nothing listens), as opposed to slow. */
export const isRefused = (error: unknown, depth = 0): boolean => {
  const e = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown[] } | undefined;
  if (!e || depth > 6) return false;
  if (e.code === 'ECONNREFUSED' || (typeof e.message === 'string' && e.message.includes('ECONNREFUSED'))) return true;
  // A client's failure after several attempts holds each attempt's error.
  return isRefused(e.cause, depth + 1) || (Array.isArray(e.errors) && e.errors.some((inner) => isRefused(inner, depth + 1)));
};

/** While a dependency is down it is probed this often, so its return is noticed within a fraction of a second. */
const DOWN_PROBE_INTERVAL_MS = 250;

const withTimeout = (work: Promise<void>, ms: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    work.then(resolve, reject).finally(() => clearTimeout(timer));
  });

/**
 * Watches Kafka, the schema registry and Postgres once a second (four times a second while one is down). It is the circuit of the edge (a request that
 * needs a dependency that is down is refused at once) and the readiness of the service; a change is logged once.
 */
export class DependencyMonitor {
  private readonly states = new Map<DependencyName, State>();
  private readonly listeners: ((name: DependencyName, up: boolean) => void)[] = [];
  private timer?: NodeJS.Timeout;
  private stopped = false;

  private readonly probes: Record<DependencyName, Probe>;
  private readonly log: Logger;
  private readonly timing: { intervalMs: number; timeoutMs: number };
  private readonly closers: (() => Promise<void>)[];

  constructor(
    probes: Record<DependencyName, Probe>,
    log: Logger,
    timing: { intervalMs: number; timeoutMs: number } = { intervalMs: 1_000, timeoutMs: PROBE_TIMEOUT_MS },
    closers: (() => Promise<void>)[] = [],
  ) {
    this.probes = probes;
    this.log = log;
    this.timing = timing;
    this.closers = closers;
  }

  async start(): Promise<void> {
    await this.probeAll();
    const loop = () => {
      if (this.stopped) return;
      const anyDown = [...this.states.values()].some((state) => !state.up);
      const interval = anyDown ? Math.min(DOWN_PROBE_INTERVAL_MS, this.timing.intervalMs) : this.timing.intervalMs;
      this.timer = setTimeout(() => void this.probeAll().finally(loop), interval);
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.all(this.closers.map((close) => close().catch(() => undefined)));
  }

  onChange(listener: (name: DependencyName, up: boolean) => void): void {
    this.listeners.push(listener);
  }

  isUp(name: DependencyName): boolean {
    return this.states.get(name)?.up ?? true;
  }

  /** Throws the 503 error when any of `names` is known to be down. */
  require(...names: DependencyName[]): void {
    for (const name of names) if (!this.isUp(name)) throw new UnavailableError(name);
  }

  checks(): Record<DependencyName, DependencyCheck> {
    const out = {} as Record<DependencyName, DependencyCheck>;
    for (const name of Object.keys(this.probes) as DependencyName[]) {
      const state = this.states.get(name);
      out[name] = {
        ok: state?.up ?? false,
        since: new Date(state?.since ?? Date.now()).toISOString(),
        ...(state?.error ? { error: state.error } : {}),
      };
    }
    return out;
  }

  private async probeAll(): Promise<void> {
    await Promise.all(
      (Object.entries(this.probes) as [DependencyName, Probe][]).map(async ([name, probe]) => {
        try {
          await withTimeout(probe(), this.timing.timeoutMs);
          this.record(name, true);
        } catch (error) {
          this.record(name, false, errorField(error).message, isRefused(error));
        }
      }),
    );
  }

  private record(name: DependencyName, answered: boolean, error?: string, refused = false): void {
    const before = this.states.get(name);
    const failures = answered ? 0 : (before?.failures ?? 0) + 1;
    const up = answered || (before !== undefined && before.up && !refused && failures < SLOW_PROBES_TO_DOWN);
    if (before && before.up === up) {
      this.states.set(name, { ...before, failures });
      return;
    }
    this.states.set(name, { up, since: Date.now(), error, failures });
    if (!before && up) return;
    if (up) this.log.warn({ dependency: name }, `${name} is reachable again`);
    else this.log.error({ dependency: name, error }, `${name} is unreachable`);
    for (const listener of this.listeners) listener(name, up);
  }
}

/** The three probes, each on a client of its own with short timeouts and no retries, so a probe answers within a second. */
export function dependencyMonitor(urls: { brokers: string[]; registryUrl: string; databaseUrl: string }, log: Logger): DependencyMonitor {
  // One probe client per broker: Kafka is up while any broker answers (a cluster serves on with one broker away); a
  // single client would ask one seed broker, chosen at random, and call Kafka down whenever it picked the one away.
  const probes = urls.brokers.map((broker) => {
    const kafka = quietKafka([broker], 'commerce-ledger-probe', { probe: { requestTimeoutMs: PROBE_TIMEOUT_MS } });
    let admin: Admin | undefined;
    const probe = async () => {
      admin ??= kafka.admin();
      try {
        await admin.connect();
        const { brokers } = await admin.describeCluster();
        if (brokers.length === 0) throw new Error('no broker in the cluster');
      } catch (error) {
        // A fresh client next time: a client may keep a half-open connection to a broker that went away.
        const stale = admin;
        admin = undefined;
        await stale.disconnect().catch(() => undefined);
        throw error;
      }
    };
    return { probe, disconnect: async () => admin?.disconnect() };
  });
  const kafkaProbe = async () => {
    await Promise.any(probes.map(({ probe }) => probe())).catch((error: AggregateError) => {
      throw error.errors[0];
    });
  };
  const registryProbe = async () => {
    const response = await fetch(`${urls.registryUrl.replace(/\/$/, '')}/config`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    await response.body?.cancel();
    if (!response.ok) throw new Error(`registry answered ${response.status}`);
  };
  const pool = new pg.Pool({
    connectionString: urls.databaseUrl,
    max: 1,
    connectionTimeoutMillis: 1_000,
    idleTimeoutMillis: 5_000,
    query_timeout: PROBE_TIMEOUT_MS,
  });
  pool.on('error', () => undefined);
  const postgresProbe = async () => {
    await pool.query('select 1');
  };
  return new DependencyMonitor({ kafka: kafkaProbe, registry: registryProbe, postgres: postgresProbe }, log, undefined, [
    ...probes.map(({ disconnect }) => disconnect),
    () => pool.end(),
  ]);
}
