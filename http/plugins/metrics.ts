import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { LedgerMetrics } from '../../ledger/metrics.ts';

/** The route label of a request no route matched (a 404 of the not-found handler, a URL refused before routing). */
const UNMATCHED = 'unmatched';

/**
 * Prometheus metrics: every response's duration by route pattern (`/api/v1/pim/products/:id`, never the raw URL, so
 * the label's values stay few), method and status code; and `GET /metrics`, public like /health and hidden from the
 * OpenAPI document, serving the ledger's registry (its command, lag, restart and Node process metrics too) in the
 * text exposition format. Registered before the routes, so that its hook is every route's.
 */
export const metricsPlugin = fp(
  async (app: FastifyInstance, { metrics }: { metrics: LedgerMetrics }) => {
    app.addHook('onResponse', async (request, reply) => {
      metrics.httpDuration.observe(
        { route: request.routeOptions.url ?? UNMATCHED, method: request.method, status_code: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
    });
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      const body = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(body);
    });
  },
  { name: 'metrics' },
);
