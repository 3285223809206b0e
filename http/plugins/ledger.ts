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

declare module 'fastify' {
  interface FastifyInstance {
    ledger: { db: Knex; execute: Execute };
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

    const execute: Execute = async (request, { topic, aggregateId }, { type, data }) => {
      const { tenantId, orgId, actor } = request.principal;
      const metadata = { commandId: randomUUID(), tenantId, orgId, actor, issuedAt: Date.now(), correlationId: String(request.id) };
      const reply = await runtime.bus.send(topic, aggregateId, { type, data, metadata });
      if (reply.outcome === 'rejected') throw deserializeDomainError(reply.error);
      if (reply.outcome === 'accepted') await runtime.waiter.waitFor(reply.positions, config.COMMAND_TIMEOUT_MS);
    };
    app.decorate('ledger', { db: runtime.db, execute });
  },
  { name: 'ledger' },
);
