import type { FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import type { Aggregate } from '../ledger/aggregate.ts';
import type { DependencyName } from '../ledger/dependencies.ts';
import type { Command, CommandInput, Event, IdempotentRequest, LogPosition } from '../ledger/message.ts';
import type { OutcomeWait } from '../ledger/projection-waiter.ts';
import type { Readiness } from '../ledger/readiness.ts';

/**
 * Sends a command to the aggregate it belongs to (a command of another aggregate does not compile), which names
 * the aggregate from the command. `idempotency`: the request may be a client's retry; see http/idempotency-key.ts.
 */
export type Execute = <C extends Command, E extends Event, S>(
  request: FastifyRequest,
  aggregate: Aggregate<C, E, S>,
  command: CommandInput<NoInfer<C>>,
  idempotency?: IdempotentRequest,
  options?: ExecuteOptions,
) => Promise<Executed>;

/**
 * `until`: `read-models` (default) returns once the live read models show the write; `committed` once the processor
 * replies that its decision is committed to the log, for a caller that reads no read model of it afterwards.
 */
export type ExecuteOptions = { until?: 'read-models' | 'committed' };
/** `positions`: where the decision's events are in the log; none when it appended nothing (or was a replay). */
export type Executed = { positions: LogPosition[] };

/** Appends a command and returns without waiting for its decision (202 endpoints). */
export type Dispatch = <C extends Command, E extends Event, S>(
  request: FastifyRequest,
  aggregate: Aggregate<C, E, S>,
  command: CommandInput<NoInfer<C>>,
) => Promise<void>;
/**
 * Waits until `read` finds the outcome in the named projection's read model, bounded by COMMAND_TIMEOUT_MS; `wait` says
 * under which key the outcome is announced and after which of the write's positions it comes (`OutcomeWait`).
 */
export type AwaitOutcome = <T>(projection: string, read: () => Promise<T | undefined>, wait?: OutcomeWait) => Promise<T>;

/**
 * What the routes see of the ledger: the read models, the way to send commands and wait for their outcome, and
 * which dependency is down. bin/server.ts gives the app one over the running ledger (http/runtime-ledger.ts);
 * the route tests give it an in-memory one (test/support/fake-ledger.ts).
 */
export interface LedgerFacade {
  /** The read models (Postgres); a route reads them through the projections' queries. */
  db: Knex;
  /** Refuses (503) a command whose dependency is down; a rejection is the decider's domain error. */
  execute: Execute;
  dispatch: Dispatch;
  awaitOutcome: AwaitOutcome;
  /** Refuses at once (503) when a dependency the request needs is known to be down. */
  require: (...dependencies: DependencyName[]) => void;
  readiness: () => Readiness;
}

declare module 'fastify' {
  interface FastifyInstance {
    ledger: LedgerFacade;
  }
}
