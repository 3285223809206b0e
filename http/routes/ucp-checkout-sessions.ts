import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { orderPermalink } from '../../commands/acp/acp-order-event.ts';
import { checkoutSessionIdOf } from '../../commands/acp/checkout-session.ts';
import type { Scope } from '../../projections/catalog/catalog-queries.ts';
import type { CheckoutSessionRow } from '../../projections/checkout/checkout-queries.ts';
import { checkoutOperations, idempotencyKeyOf, idempotent } from '../checkout-operations.ts';
import { CheckoutRefused } from '../checkout-refused.ts';
import { ucpFulfillmentOf, ucpItemPath, ucpItemsOf, ucpPaymentOf, UCP_OPTION_PATH } from '../ucp-checkout-request.ts';
import { ucpMessageOf, UcpProtocolError, type UcpMessageError } from '../ucp-edge.ts';
import {
  cancelCheckoutBody,
  completeCheckoutBody,
  createCheckoutBody,
  ucpHeaders,
  ucpResponses,
  ucpWriteHeaders,
  updateCheckoutBody,
} from '../ucp-schemas.ts';
import { ucpSessionBody } from '../ucp-session-body.ts';

/**
 * UCP's checkout capability over REST (2026-04-08, `rest.openapi.json`: `/checkout-sessions`), over the same checkout
 * sessions as ACP's routes (http/checkout-operations.ts): create, get, update (PUT replaces the session's items, buyer
 * and fulfillment), complete (places the order) and cancel. Registered in a scope that authenticated the platform
 * (http/ucp-edge.ts).
 */
export type UcpCheckoutRoutesOptions = { publicBaseUrl: string };

const merchant = { tenant_id: z.string(), org_id: z.string() };
const sessionParams = z.object({ ...merchant, id: z.string() });

/** A create's session id: its key, in a namespace of its own so that an ACP create's key never meets it. */
const ucpSessionKey = (key: string) => `ucp:${key}`;

export default async function ucpCheckoutSessionRoutes(
  fastify: FastifyInstance,
  { publicBaseUrl }: UcpCheckoutRoutesOptions,
): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const checkout = checkoutOperations(app.ledger, 'ucp');
  const { readSession, settingsOf } = checkout;
  const tags = ['agentic checkout (UCP)'];
  // Documented by the protocol's own OpenAPI (test/fixtures/ucp/services), whose bodies and errors they answer.
  const hide = true;
  const orderUrl = (orderId: string) => orderPermalink(publicBaseUrl, orderId);

  const answer = async (scope: Scope, row: CheckoutSessionRow, messages: UcpMessageError[] = []) =>
    ucpSessionBody(row, await settingsOf(scope), orderUrl, messages);

  app.post('/checkout-sessions', {
    schema: {
      hide,
      tags,
      summary: 'UCP: create a checkout session',
      headers: ucpWriteHeaders,
      params: z.object(merchant),
      body: createCheckoutBody,
      response: ucpResponses(201),
    },
    handler: async (request, reply) => {
      const scope = request.principal;
      const { body } = request;
      const items = ucpItemsOf(body.line_items);
      // UCP lets the merchant choose the currency: the buyer's signal when given, else the first item's price's.
      const currency = (body.context?.currency ?? (items[0] ? await checkout.currencyOf(scope, items[0].id) : undefined))?.toUpperCase();
      if (!currency)
        throw new CheckoutRefused(
          400,
          'invalid',
          'name an item this merchant sells, or context.currency',
          items[0] ? ucpItemPath(0) : '$.context.currency',
        );
      const row = await checkout.open(request, {
        sessionId: checkoutSessionIdOf(scope.tenantId, scope.orgId, ucpSessionKey(idempotencyKeyOf(request))),
        currency,
        items,
        itemPath: ucpItemPath,
        ...ucpFulfillmentOf(body.fulfillment, body.buyer),
        buyer: body.buyer ? JSON.stringify(body.buyer) : null,
        requestHash: idempotent(request, 'ucp-create').requestHash,
      });
      return reply.code(201).send(await answer(scope, row));
    },
  });

  app.get('/checkout-sessions/:id', {
    schema: {
      hide,
      tags,
      summary: 'UCP: get a checkout session',
      headers: ucpHeaders,
      params: sessionParams,
      response: ucpResponses(200),
    },
    handler: async (request) => answer(request.principal, await readSession(request.principal, request.params.id)),
  });

  app.put('/checkout-sessions/:id', {
    schema: {
      hide,
      tags,
      summary: 'UCP: update a checkout session: the request replaces its items, buyer and fulfillment; the cart is priced again',
      headers: ucpWriteHeaders,
      params: sessionParams,
      body: updateCheckoutBody,
      response: ucpResponses(200),
    },
    handler: async (request) => {
      const scope = request.principal;
      const { body } = request;
      const row = await readSession(scope, request.params.id);
      const after = await checkout.revise(
        request,
        row,
        {
          items: ucpItemsOf(body.line_items),
          itemPath: ucpItemPath,
          ...ucpFulfillmentOf(body.fulfillment, body.buyer),
          selectedPath: UCP_OPTION_PATH,
          buyer: body.buyer ? JSON.stringify(body.buyer) : null,
        },
        idempotent(request, 'ucp-update'),
      );
      return answer(scope, after);
    },
  });

  app.post('/checkout-sessions/:id/complete', {
    schema: {
      hide,
      tags,
      summary: 'UCP: complete a checkout session: place the order (stock reserved, payment token recorded, not captured)',
      headers: ucpWriteHeaders,
      params: sessionParams,
      body: completeCheckoutBody,
      response: ucpResponses(200),
    },
    handler: async (request) => {
      const scope = request.principal;
      const row = await readSession(scope, request.params.id);
      const payment = ucpPaymentOf(request.body.payment.instruments);
      try {
        return await answer(scope, await checkout.complete(request, row, payment, null, idempotent(request, 'ucp-complete')));
      } catch (error) {
        // A completion the session outlived (stock short, the order refused, not ready): the session as it is now,
        // its messages saying why, which is how UCP answers a business outcome on a checkout that still exists.
        if (!(error instanceof CheckoutRefused) || !['out_of_stock', 'processing_error', 'invalid_state'].includes(error.code)) throw error;
        const now = await readSession(scope, row.id);
        if (now.status !== 'not_ready_for_payment' && now.status !== 'ready_for_payment') throw error;
        return answer(scope, now, error.code === 'processing_error' ? [ucpMessageOf(error)] : []);
      }
    },
  });

  app.post('/checkout-sessions/:id/cancel', {
    schema: {
      hide,
      tags,
      summary: 'UCP: cancel a checkout session',
      headers: ucpWriteHeaders,
      params: sessionParams,
      description: 'UCP defines no body; an empty object, as its examples send, is taken too, so the handler checks it.',
      response: ucpResponses(200),
    },
    handler: async (request) => {
      const scope = request.principal;
      if (!cancelCheckoutBody.safeParse(request.body ?? {}).success)
        throw new UcpProtocolError(400, 'invalid_request', 'the body of a cancel, when there is one, must be a JSON object');
      const row = await readSession(scope, request.params.id);
      return answer(scope, await checkout.cancel(request, row, idempotent(request, 'ucp-cancel')));
    },
  });
}
