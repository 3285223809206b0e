import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { productPushAggregate } from '../../commands/integrations/product-push.ts';
import { NotFoundError } from '../../ledger/errors.ts';
import { findProduct } from '../../projections/catalog/catalog-queries.ts';
import { syncStatus, type ItemFailureRow } from '../../projections/integrations/push-queries.ts';
import { errorResponses, standardHeaders, timestamp, uuid } from '../schemas.ts';

const pushBody = z
  .object({
    productId: uuid.describe('A product of the tenant and org'),
    action: z.enum(['UPSERT', 'DELETE']).describe('UPSERT writes the product as it now is; DELETE removes it from the platforms'),
  })
  .strict();

const failure = z.object({
  item_push_id: uuid,
  product_id: uuid,
  reason: z.string(),
  http_status: z.number().int().nullable(),
  attempts: z.number().int(),
  next_attempt_at: timestamp.nullable().describe('null once dead-lettered'),
  failed_at: timestamp,
});

const syncStatusBody = z
  .object({
    connection_id: uuid,
    status: z.enum(['ACTIVE', 'DISCONNECTED', 'AUTH_FAILED']),
    status_reason: z.string().nullable(),
    initial_sync: z.object({
      total: z.number().int().describe('Products of the tenant when the connection was (re)activated'),
      pushed: z.number().int(),
      failed: z.number().int().describe('Dead-lettered'),
      complete: z.boolean(),
      started_at: timestamp.nullable(),
    }),
    items: z.object({
      synced: z.number().int().describe('The platform has the latest requested state'),
      pending: z.number().int().describe('Waiting for a push'),
      retrying: z.number().int().describe('Failed, with a retry scheduled'),
      dead_lettered: z.number().int(),
    }),
    last_pushed_at: timestamp.nullable(),
    failures: z.array(failure).describe('Items whose last attempt failed and will be retried (most recent first, at most 100)'),
    dead_letters: z.array(failure).describe('Items given up on until re-driven (`npm run dlq`) (most recent first, at most 100)'),
  })
  .meta({ id: 'ConnectionSyncStatus' });

const iso = (at: Date | null) => (at ? at.toISOString() : null);
const toFailure = (row: ItemFailureRow): z.infer<typeof failure> => ({
  item_push_id: row.item_push_id,
  product_id: row.product_id,
  reason: row.last_error,
  http_status: row.last_http_status,
  attempts: row.failures,
  next_attempt_at: iso(row.next_attempt_at),
  failed_at: row.last_failed_at.toISOString(),
});

/** `POST /unified/sync/push/product`: a push of one product to every active connection, queued in the ledger. */
export async function productPushRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.post('/sync/push/product', {
    schema: {
      tags: ['integrations'],
      summary: 'Push a product to every active connection (asynchronous; 202 once the request is in the ledger)',
      headers: standardHeaders,
      body: pushBody,
      response: { 202: z.object({ status: z.literal('queued') }), ...errorResponses },
    },
    handler: async (request, reply) => {
      const { productId, action } = request.body;
      app.ledger.require('postgres', 'kafka');
      if (!(await findProduct(app.ledger.db, request.principal, productId))) throw new NotFoundError(`product ${productId} not found`);
      await app.ledger.dispatch(request, productPushAggregate, { type: 'RequestProductPush', data: { productId, action } });
      return reply.code(202).send({ status: 'queued' as const });
    },
  });
}

/** `GET /api/v1/integrations/connections/{id}/sync`: what the push has done for one connection. */
export async function syncStatusRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/connections/:id/sync', {
    schema: {
      tags: ['integrations'],
      summary: "A connection's sync: initial sync progress, pending and failed pushes, dead letters",
      headers: standardHeaders,
      params: z.object({ id: uuid }),
      response: { 200: syncStatusBody, ...errorResponses },
    },
    handler: async (request) => {
      const status = await syncStatus(app.ledger.db, request.principal, request.params.id);
      if (!status) throw new NotFoundError(`connection ${request.params.id} not found`);
      const { connection, counts, lastPushedAt, failures, deadLetters } = status;
      return {
        connection_id: connection.id,
        status: connection.status as z.infer<typeof syncStatusBody>['status'],
        status_reason: connection.status_reason,
        initial_sync: {
          total: connection.initial_total,
          pushed: counts.initial_pushed,
          failed: counts.initial_failed,
          complete: counts.initial_pushed + counts.initial_failed >= connection.initial_total,
          started_at: iso(connection.activated_at),
        },
        items: { synced: counts.synced, pending: counts.pending, retrying: counts.retrying, dead_lettered: counts.dead_lettered },
        last_pushed_at: iso(lastPushedAt),
        failures: failures.map(toFailure),
        dead_letters: deadLetters.map(toFailure),
      };
    },
  });
}
