import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { orderPermalink } from '../../commands/acp/acp-order-event.ts';
import { NotFoundError } from '../../ledger/errors.ts';
import { findCheckoutSession } from '../../projections/checkout/checkout-queries.ts';
import { feedSettingsOf, findCatalogFeed } from '../../projections/feed/feed-queries.ts';
import { checkoutSession } from '../acp-schemas.ts';
import { acpSessionBody } from '../acp-session-body.ts';
import { errorResponses, standardHeaders } from '../schemas.ts';

/**
 * GET /api/v1/ucp/checkout-sessions/{id}: a checkout session as the tenant's own users see it (JWT, tenant-scoped), in
 * ACP's shape: the buyer and fulfillment details the agent gave, and the order it placed. An order placed by a session
 * is tagged `checkout_session:<id>`; the order model has no place for a buyer's contact or address, so this is where
 * the merchant reads them.
 */
export type MerchantCheckoutOptions = { publicBaseUrl: string };

export default async function merchantCheckoutSessionRoutes(
  fastify: FastifyInstance,
  { publicBaseUrl }: MerchantCheckoutOptions,
): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/checkout-sessions/:id', {
    schema: {
      tags: ['agentic checkout (ACP)'],
      summary: "One of the tenant's checkout sessions (ACP CheckoutSession): buyer, fulfillment details, the order placed",
      headers: standardHeaders,
      params: z.object({ id: z.guid() }),
      response: { 200: checkoutSession, ...errorResponses },
    },
    handler: async (request) => {
      const { db } = app.ledger;
      const id = request.params.id.toLowerCase();
      const row = await findCheckoutSession(db, request.principal, id);
      if (!row) throw new NotFoundError(`checkout session ${id} not found`);
      const settings = feedSettingsOf(await findCatalogFeed(db, request.principal));
      return acpSessionBody(row, settings, (orderId) => orderPermalink(publicBaseUrl, orderId));
    },
  });
}
