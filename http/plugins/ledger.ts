import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Knex } from 'knex';
import type { Config } from '../../ledger/config.ts';
import { deserializeDomainError } from '../../ledger/errors.ts';
import type { Logger } from '../../ledger/logger.ts';
import type { Command } from '../../ledger/message.ts';
import { startRuntime } from '../../ledger/runtime.ts';
import type { TopicSpec } from '../../ledger/topics.ts';

export type Execute = <C extends Command>(
  request: FastifyRequest,
  target: { topic: TopicSpec; aggregateId: string },
  command: Pick<C, 'type' | 'data'>,
) => Promise<void>;

/** Appends a command and returns without waiting for its decision (202 endpoints). */
export type Dispatch = Execute;
/** Waits until `read` finds the outcome in the named projection's read model, bounded by COMMAND_TIMEOUT_MS. */
export type AwaitOutcome = <T>(projection: string, read: () => Promise<T | undefined>) => Promise<T>;

declare module 'fastify' {
  interface FastifyInstance {
    ledger: { db: Knex; execute: Execute; dispatch: Dispatch; awaitOutcome: AwaitOutcome };
  }
}

/**
 * The ledger runtime as a fastify plugin. `execute` sends a command to its aggregate's single writer,
 * turns a rejection into the domain error, and returns only once the live read models show the write.
 */
export const ledgerPlugin = fp(
  async (app: FastifyInstance, { config, logger }: { config: Config; logger: Logger }) => {
    const runtime = await startRuntime(config, logger);
    app.addHook('onClose', () => runtime.stop());

    const metadataOf = (request: FastifyRequest) => {
      const { tenantId, orgId, actor } = request.principal;
      return { commandId: randomUUID(), tenantId, orgId, actor, issuedAt: Date.now(), correlationId: String(request.id) };
    };
    const execute: Execute = async (request, { topic, aggregateId }, { type, data }) => {
      const reply = await runtime.bus.send(topic, aggregateId, { type, data, metadata: metadataOf(request) });
      if (reply.outcome === 'rejected') throw deserializeDomainError(reply.error);
      if (reply.outcome === 'accepted') await runtime.waiter.waitFor(reply.positions, config.COMMAND_TIMEOUT_MS);
    };
    const dispatch: Dispatch = (request, { topic, aggregateId }, { type, data }) =>
      runtime.bus.post(topic, aggregateId, { type, data, metadata: metadataOf(request) });
    const awaitOutcome: AwaitOutcome = (projection, read) => runtime.waiter.waitUntil(projection, read, config.COMMAND_TIMEOUT_MS);
    app.decorate('ledger', { db: runtime.db, execute, dispatch, awaitOutcome });
  },
  { name: 'ledger' },
);
