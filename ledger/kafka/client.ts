import { GenericError, MultipleErrors, NetworkError, type BaseOptions } from '@platformatic/kafka';
import type { Logger } from '../logger.ts';
import { KafkaAdmin } from './admin.ts';
import { sleep } from '../sleep.ts';
import { rootCause, ThrottledLog } from '../throttled-log.ts';

/**
 * Where the brokers are and how a process names itself to them: every producer, consumer and admin of the port is
 * created from one of these (each Kafka client of `@platformatic/kafka` holds its own connections).
 */
export class Kafka {
  /** One line per kind of client failure per interval (an outage repeats the same failure for every request). */
  readonly log?: ThrottledLog;

  constructor(
    readonly brokers: string[],
    readonly clientId: string,
    logger?: Logger,
    readonly settings: {
      /** Short timeouts and no retries: a question to a broker that is away is answered within about a second. */
      probe?: { requestTimeoutMs: number };
      /**
       * What this process is among the service's instances (config INSTANCE_ID): its consumer groups' static member id
       * and part of its transactional ids. None: dynamic members (a CLI, a test).
       */
      instanceId?: string;
    } = {},
  ) {
    if (logger) this.log = new ThrottledLog(logger.child({ component: 'kafka' }));
  }

  /** The options every client of this process shares; `overrides` per kind of client. */
  get instanceId(): string | undefined {
    return this.settings.instanceId;
  }

  options(overrides: Partial<BaseOptions> = {}): BaseOptions {
    const { probe } = this.settings;
    return {
      clientId: this.clientId,
      bootstrapBrokers: this.brokers,
      connectTimeout: probe ? 1_000 : 3_000,
      timeout: probe?.requestTimeoutMs ?? 5_000,
      retries: probe ? 0 : 3,
      retryDelay: retryDelay,
      ...overrides,
    };
  }

  /** An admin client of its own (its connections are closed by its `disconnect`). */
  admin(options: { retries?: number } = {}): KafkaAdmin {
    return new KafkaAdmin(this, options);
  }

  /** Logs a client failure at most once per kind per interval. */
  warn(kind: string, error: unknown, message: string): void {
    this.log?.write('warn', `${kind}:${String(kafkaErrorType(error) ?? errorName(error))}`, { err: describe(error) }, message);
  }
}

const errorName = (error: unknown) => (rootCause(error) as { name?: string } | undefined)?.name;
const describe = (error: unknown) => ({ type: kafkaErrorType(error), message: (rootCause(error) as Error | undefined)?.message ?? String(error) });

/**
 * Answers a request gets while a coordinator is still busy (writing the previous commit's markers, loading, moving):
 * transient, tried again after a few milliseconds, where the client's default of a second would stall every round.
 */
const BUSY_COORDINATOR = new Set(['CONCURRENT_TRANSACTIONS', 'COORDINATOR_LOAD_IN_PROGRESS', 'COORDINATOR_NOT_AVAILABLE', 'NOT_COORDINATOR']);

/** 5 ms doubling for a busy coordinator, 100 ms doubling to a second for anything else (a broker away, a leader moving). */
const retryDelay = (_client: unknown, _operation: string, attempt: number, _retries: number, error: Error): number =>
  BUSY_COORDINATOR.has(String(kafkaErrorType(error))) ? Math.min(200, 5 * 2 ** attempt) : Math.min(1_000, 100 * 2 ** (attempt - 1));

/** Whether an error comes from the Kafka client (a broker unreachable, a request refused or timed out). */
export const isKafkaError = (error: unknown): boolean => error instanceof GenericError || error instanceof MultipleErrors;

/** The error the client raises when it cannot reach a broker (for tests of what the service makes of it). */
export const kafkaConnectionError = (message: string): Error => new NetworkError(message);

type Found = { apiId?: string; errors?: unknown[]; cause?: unknown };

/** The broker's name for the error behind a failure (`NOT_COORDINATOR`, …), however deep the client wrapped it. */
export function kafkaErrorType(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  const search = (candidate: unknown): string | undefined => {
    if (!candidate || typeof candidate !== 'object' || seen.has(candidate)) return undefined;
    seen.add(candidate);
    const found = candidate as Found;
    if (typeof found.apiId === 'string') return found.apiId;
    // The last of several attempts is the one that says what the broker thinks now.
    for (const inner of [...(found.errors ?? [])].reverse()) {
      const type = search(inner);
      if (type) return type;
    }
    return search(found.cause);
  };
  return search(error);
}

export const isTransientTransactionError = (error: unknown): boolean => BUSY_COORDINATOR.has(String(kafkaErrorType(error)));

/**
 * Runs `step` again while it fails and `pause(attempt, error)` (attempt 0 the first failure) names how long to wait
 * first; `undefined` gives up and rethrows. Each caller says which Kafka errors pass and for how long.
 */
export async function retryKafka<T>(step: () => Promise<T>, pause: (attempt: number, error: unknown) => number | undefined): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      const ms = pause(attempt, error);
      if (ms === undefined) throw error;
      await sleep(ms);
    }
  }
}

/**
 * Retries one step of a transaction (send records, commit offsets) while the broker answers with a transient error,
 * 5 ms then doubling to 200 ms, for about 3 s in all (beyond the client's own retries).
 */
export const retryTransient = <T>(step: () => Promise<T>, onRetry: (error: unknown) => void = () => undefined): Promise<T> =>
  retryKafka(step, (attempt, error) => {
    if (!isTransientTransactionError(error) || attempt >= 20) return undefined;
    onRetry(error);
    return Math.min(200, 5 * 2 ** attempt) * (0.5 + Math.random() / 2);
  });

/** Stops clients in order, each as far as it can: a client of a broker that went away may fail to say goodbye. */
export async function disconnectQuietly(...clients: ({ disconnect: () => Promise<void> } | undefined)[]): Promise<void> {
  for (const client of clients) await client?.disconnect().catch(() => undefined);
}
