import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Knex } from 'knex';
import type { LedgerMetrics, Sample } from '../../ledger/metrics.ts';
import { liveSchema, type Projection } from '../../ledger/projection.ts';
import { inboundProjection } from '../../projections/integrations/inbound-projection.ts';
import { pushProjection } from '../../projections/integrations/push-projection.ts';

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
      const body = await metrics.text();
      return reply.type(metrics.registry.contentType).send(body);
    });
  },
  { name: 'metrics' },
);

/** A scrape must not wait out the pool's acquire timeout while Postgres is away: the gauge is then left out. */
const DEAD_LETTER_QUERY_TIMEOUT_MS = 2_000;

/**
 * `ledger_dead_letters{kind}`: the product pushes dead-lettered (kind push) and the inbound webhook deliveries still
 * dead-lettered (kind inbound), counted in their read models at scrape time, as `npm run dlq list` lists them; only
 * the kinds whose projection the service runs. `available` refuses (throws) while Postgres is known to be down.
 */
export function exposeDeadLetters(metrics: LedgerMetrics, db: Knex, projections: readonly Projection[], available: () => void): void {
  const runs = (projection: Projection) => projections.some(({ name }) => name === projection.name);
  const counts: { kind: string; count: () => Promise<number> }[] = [];
  const countOf = async (query: Knex.QueryBuilder) => Number(((await query.count({ n: '*' }).first()) as { n: string | number }).n);
  if (runs(pushProjection))
    counts.push({ kind: 'push', count: () => countOf(db(`${liveSchema(pushProjection)}.items`).where({ dead_lettered: true })) });
  if (runs(inboundProjection))
    counts.push({
      kind: 'inbound',
      count: () => countOf(db(`${liveSchema(inboundProjection)}.dead_letters`).where({ status: 'DEAD_LETTERED' })),
    });
  if (counts.length === 0) return;
  metrics.gauge(
    'ledger_dead_letters',
    'Dead letters waiting for an operator, by kind (push, inbound), read from the read models',
    ['kind'],
    async () => {
      available();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('dead letter count timed out')), DEAD_LETTER_QUERY_TIMEOUT_MS);
      });
      try {
        return await Promise.race([
          Promise.all(counts.map(async ({ kind, count }): Promise<Sample> => ({ labels: { kind }, value: await count() }))),
          timeout,
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
  );
}
