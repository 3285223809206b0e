import type { BaseOptions } from '@platformatic/kafka';

/** What every client of the port is made from: the brokers, the process's name and instance, and where failures are told. */
export interface ClientSettings {
  /** What this process is among the service's instances (its static member id); none for a CLI or a test. */
  readonly instanceId: string | undefined;
  /** The client options every client of this process shares; `overrides` per kind of client. */
  options(overrides?: Partial<BaseOptions>): BaseOptions;
  /** Logs a client failure at most once per kind per interval. */
  warn(kind: string, error: unknown, message: string): void;
}
