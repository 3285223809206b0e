import type { BaseOptions } from '@platformatic/kafka';
import type { Logger } from '../logger.ts';
import { KafkaAdmin } from './admin.ts';
import { rootCause, ThrottledLog } from '../throttled-log.ts';
import { kafkaErrorType, retryDelay } from './errors.ts';
import type { ClientSettings } from './settings.ts';

/**
 * Where the brokers are and how a process names itself to them: every producer, consumer and admin of the port is
 * created from one of these (each Kafka client of `@platformatic/kafka` holds its own connections).
 */
export class Kafka implements ClientSettings {
  /** One line per kind of client failure per interval (an outage repeats the same failure for every request). */
  readonly log?: ThrottledLog;

  readonly brokers: string[];
  readonly clientId: string;
  readonly settings: {
    /** Short timeouts and no retries: a question to a broker that is away is answered within about a second. */
    probe?: { requestTimeoutMs: number };
    /**
     * What this process is among the service's instances (config INSTANCE_ID): its consumer groups' static member id
     * and part of its transactional ids. None: dynamic members (a CLI, a test).
     */
    instanceId?: string;
  };

  constructor(
    brokers: string[],
    clientId: string,
    logger?: Logger,
    settings: {
      /** Short timeouts and no retries: a question to a broker that is away is answered within about a second. */
      probe?: { requestTimeoutMs: number };
      /**
       * What this process is among the service's instances (config INSTANCE_ID): its consumer groups' static member id
       * and part of its transactional ids. None: dynamic members (a CLI, a test).
       */
      instanceId?: string;
    } = {},
  ) {
    this.brokers = brokers;
    this.clientId = clientId;
    this.settings = settings;

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
const describe = (error: unknown) => ({
  type: kafkaErrorType(error),
  message: (rootCause(error) as Error | undefined)?.message ?? String(error),
});
