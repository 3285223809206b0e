import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Knex } from 'knex';
import type { Aggregate } from '../../ledger/aggregate.ts';
import type { LedgerConfig } from '../../ledger/config.ts';
import { deserializeDomainError } from '../../ledger/errors.ts';
import type { Logger } from '../../ledger/logger.ts';
import type { Command, CommandInput, Event, IdempotentRequest, LogPosition } from '../../ledger/message.ts';
import type { DependencyName } from '../../ledger/dependencies.ts';
import type { Readiness } from '../../ledger/readiness.ts';
import { startRuntime, type LedgerModules } from '../../ledger/runtime.ts';
import { namespaced, type TopicSpec } from '../../ledger/topics.ts';

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
  // void: what a stand-in for the ledger may answer; the ledger's own execute always says what it appended.
) => Promise<Executed | void>;

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
/** Waits until `read` finds the outcome in the named projection's read model, bounded by COMMAND_TIMEOUT_MS. */
export type AwaitOutcome = <T>(projection: string, read: () => Promise<T | undefined>) => Promise<T>;

declare module 'fastify' {
  interface FastifyInstance {
    ledger: {
      db: Knex;
      execute: Execute;
      dispatch: Dispatch;
      awaitOutcome: AwaitOutcome;
      /** Refuses at once (503) when a dependency the request needs is known to be down. */
      require: (...dependencies: DependencyName[]) => void;
      readiness: () => Readiness;
    };
  }
}

/**
 * The ledger runtime as a fastify plugin. `execute` sends a command to its aggregate's single writer,
 * turns a rejection into the domain error, and returns only once the live read models show the write.
 */
export const ledgerPlugin = fp(
  async (app: FastifyInstance, { config, logger, modules }: { config: LedgerConfig; logger: Logger; modules: LedgerModules }) => {
    const runtime = await startRuntime(config, logger, modules);
    app.addHook('onClose', () => runtime.stop());

    const metadataOf = (request: FastifyRequest) => {
      const { tenantId, orgId, actor } = request.principal;
      return { commandId: randomUUID(), tenantId, orgId, actor, issuedAt: Date.now(), correlationId: String(request.id) };
    };
    /** Where an events log ends now, as a read_committed reader sees it. */
    const logEnd = async (events: TopicSpec): Promise<LogPosition[]> => {
      const topic = namespaced(config.LEDGER_NAMESPACE, events.name);
      const admin = runtime.kafka.admin();
      await admin.connect();
      try {
        const ends = await admin.fetchTopicOffsets(topic);
        return ends
          .filter(({ high }) => BigInt(high) > 0n)
          .map(({ partition, high }) => ({ topic, partition, offset: (BigInt(high) - 1n).toString() }));
      } finally {
        await admin.disconnect();
      }
    };
    const execute: Execute = async (request, aggregate, { type, data }, idempotency, options) => {
      const untilCommitted = options?.until === 'committed';
      runtime.dependencies.require(...(untilCommitted ? (['kafka'] as const) : (['kafka', 'postgres'] as const)));
      const metadata = { ...metadataOf(request), ...(idempotency ? { idempotency } : {}) };
      const reply = await runtime.bus.send(aggregate.commands, aggregate.aggregateIdOf({ data }), { type, data, metadata });
      if (reply.outcome === 'rejected') throw deserializeDomainError(reply.error);
      if (reply.outcome !== 'accepted') return { positions: [] };
      // The reply is written in the processor's transaction, so reading it (read_committed) means the events are committed.
      if (untilCommitted) return { positions: reply.positions };
      // A retry of an accepted request writes nothing, and its original's events may not be in the read models yet
      // (that is why the client retried): wait for everything the log holds now, the original included.
      const replayed = idempotency && reply.positions.length === 0;
      const positions = replayed ? await logEnd(aggregate.events) : reply.positions;
      // Postgres may have gone away while the command was decided: its failAll has passed, so refuse now rather than
      // wait for the timeout (the check and the wait's registration run in the same tick).
      runtime.dependencies.require('postgres');
      await runtime.waiter.waitFor(positions, config.COMMAND_TIMEOUT_MS);
      return { positions: reply.positions };
    };
    const dispatch: Dispatch = async (request, aggregate, { type, data }) => {
      runtime.dependencies.require('kafka');
      await runtime.bus.post(aggregate.commands, aggregate.aggregateIdOf({ data }), { type, data, metadata: metadataOf(request) });
    };
    const awaitOutcome: AwaitOutcome = (projection, read) => runtime.waiter.waitUntil(projection, read, config.COMMAND_TIMEOUT_MS);
    const require = (...dependencies: DependencyName[]) => runtime.dependencies.require(...dependencies);
    app.decorate('ledger', { db: runtime.db, execute, dispatch, awaitOutcome, require, readiness: runtime.readiness });
  },
  { name: 'ledger' },
);
