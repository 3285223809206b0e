import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ucpOrderOf, UCP_ORDER } from '../../commands/acp/ucp-order.ts';
import { UCP_VERSION } from '../../commands/acp/ucp-cart.ts';
import { findCheckoutSession } from '../../projections/checkout/checkout-queries.ts';
import { findOrder } from '../../projections/oms/oms-queries.ts';
import { ucpErrorResponse } from '../ucp-edge.ts';
import { ucpHeaders, ucpOrderResponses } from '../ucp-schemas.ts';

/**
 * UCP's order capability over REST (2026-04-08, `rest.openapi.json`: `GET /orders/{id}`): the current state of an order
 * the platform placed through UCP's checkout, the same body the order webhook sends (commands/acp/ucp-order.ts).
 * Registered in the scope that authenticated the platform with the tenant's key (http/ucp-edge.ts); any other order
 * of the tenant (placed through ACP, mapped from a platform, entered by hand) is not found, as another tenant's is.
 */
export type UcpOrderRoutesOptions = { publicBaseUrl: string };

const params = z.object({ tenant_id: z.string(), org_id: z.string(), id: z.string() });
const guid = z.guid();
const SESSION_TAG = 'checkout_session:';
/** The statuses before or beside the moves a UCP order shows (placed, confirmed, or never confirmed). */
const NOT_MOVES = new Set(['pending', 'confirmed', 'rejected']);

export default async function ucpOrderRoutes(fastify: FastifyInstance, { publicBaseUrl }: UcpOrderRoutesOptions): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get('/orders/:id', {
    schema: {
      // Documented by the protocol's own OpenAPI (test/fixtures/ucp/services), whose bodies and errors it answers.
      hide: true,
      tags: ['agentic checkout (UCP)'],
      summary: 'UCP: get an order the platform placed',
      headers: ucpHeaders,
      params,
      response: ucpOrderResponses,
    },
    handler: async (request) => {
      const scope = request.principal;
      const { id } = request.params;
      const order = guid.safeParse(id).success ? await findOrder(app.ledger.db, scope, id.toLowerCase()) : undefined;
      const sessionId =
        order?.platform === 'ucp' ? order.tags.find((tag) => tag.startsWith(SESSION_TAG))?.slice(SESSION_TAG.length) : undefined;
      const session = order && sessionId ? await findCheckoutSession(app.ledger.db, scope, sessionId) : undefined;
      if (!order || !session || order.status === 'rejected')
        return ucpErrorResponse(
          { code: 'not_found', content: `order ${id} not found`, severity: 'unrecoverable' },
          { [UCP_ORDER]: [{ version: UCP_VERSION }] },
        );
      const moves = order.status_history
        .filter((entry) => entry.outcome === 'applied' && !NOT_MOVES.has(entry.status))
        .map((entry) => ({ status: entry.status, at: new Date(entry.at) }));
      return ucpOrderOf({ publicBaseUrl, sessionId: session.id, orderId: order.id, cart: session.cart, moves });
    },
  });
}
