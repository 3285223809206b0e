import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkoutSessionIdOf } from '../../commands/acp/checkout-session.ts';
import { orderPermalink } from '../../commands/acp/acp-order-event.ts';
import type { Scope } from '../../projections/catalog/catalog-queries.ts';
import type { CheckoutSessionRow } from '../../projections/checkout/checkout-queries.ts';
import { AcpError } from '../acp-edge.ts';
import {
  acpErrorResponses,
  acpHeaders,
  acpPostHeaders,
  cancelSessionBody,
  checkoutSession,
  completeSessionBody,
  createSessionBody,
  updateSessionBody,
} from '../acp-schemas.ts';
import { acpSessionBody } from '../acp-session-body.ts';
import { checkoutOperations, idempotencyKeyOf, idempotent, type CartItem } from '../checkout-operations.ts';

/**
 * ACP Agentic Checkout (2026-04-17) over the ledger: the checkout session's operations (http/checkout-operations.ts)
 * in ACP's bodies and errors. Registered in a scope that authenticated the agent.
 */
export type CheckoutRoutesOptions = { publicBaseUrl: string };

const merchant = { tenant_id: z.string(), org_id: z.string() };
const sessionParams = z.object({ ...merchant, checkout_session_id: z.string() });

/** ACP items as (id, quantity): each entry is one unit, in the order ids first appear. */
const unitsOf = (items: { id: string }[]): CartItem[] => {
  const counts = new Map<string, number>();
  for (const { id } of items) counts.set(id, (counts.get(id) ?? 0) + 1);
  return [...counts].map(([id, quantity]) => ({ id, quantity }));
};

const itemPath = (index: number) => `$.line_items[${index}].id`;

export default async function checkoutSessionRoutes(fastify: FastifyInstance, { publicBaseUrl }: CheckoutRoutesOptions): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const checkout = checkoutOperations(app.ledger, 'acp');
  const { readSession, settingsOf } = checkout;
  const tags = ['agentic checkout (ACP)'];
  // Documented by the protocol's own OpenAPI (test/fixtures/acp), whose error objects they answer, not by ours.
  const hide = true;
  const orderUrl = (orderId: string) => orderPermalink(publicBaseUrl, orderId);

  const answer = async (scope: Scope, row: CheckoutSessionRow) => acpSessionBody(row, await settingsOf(scope), orderUrl);

  app.post('/checkout_sessions', {
    schema: {
      hide,
      tags,
      summary: 'ACP: create a checkout session',
      headers: acpPostHeaders,
      params: z.object(merchant),
      body: createSessionBody,
      response: { 201: checkoutSession, ...acpErrorResponses },
    },
    handler: async (request, reply) => {
      const scope = request.principal;
      const { body } = request;
      const row = await checkout.open(request, {
        sessionId: checkoutSessionIdOf(scope.tenantId, scope.orgId, idempotencyKeyOf(request)),
        currency: body.currency.toUpperCase(),
        items: unitsOf(body.line_items),
        itemPath,
        selectedOptionId: null,
        fulfillmentDetails: body.fulfillment_details ? JSON.stringify(body.fulfillment_details) : null,
        buyer: body.buyer ? JSON.stringify(body.buyer) : null,
        requestHash: idempotent(request, 'create').requestHash,
      });
      return reply
        .code(201)
        .header('idempotency-key', idempotencyKeyOf(request))
        .send(await answer(scope, row));
    },
  });

  app.get('/checkout_sessions/:checkout_session_id', {
    schema: {
      hide,
      tags,
      summary: 'ACP: read a checkout session',
      headers: acpHeaders,
      params: sessionParams,
      response: { 200: checkoutSession, ...acpErrorResponses },
    },
    handler: async (request) => answer(request.principal, await readSession(request.principal, request.params.checkout_session_id)),
  });

  app.post('/checkout_sessions/:checkout_session_id', {
    schema: {
      hide,
      tags,
      summary: 'ACP: update a checkout session (items, address, fulfillment option); the cart is priced again',
      headers: acpPostHeaders,
      params: sessionParams,
      body: updateSessionBody,
      response: { 200: checkoutSession, ...acpErrorResponses },
    },
    handler: async (request, reply) => {
      const scope = request.principal;
      const { body } = request;
      const row = await readSession(scope, request.params.checkout_session_id);
      const current = row.cart;
      const after = await checkout.revise(
        request,
        row,
        {
          items: body.line_items ? unitsOf(body.line_items) : current.lines.map((line) => ({ id: line.itemId, quantity: line.quantity })),
          itemPath,
          selectedOptionId: body.selected_fulfillment_options?.[0]?.option_id ?? current.selectedOptionId,
          selectedPath: '$.selected_fulfillment_options[0].option_id',
          fulfillmentDetails: body.fulfillment_details ? JSON.stringify(body.fulfillment_details) : current.fulfillmentDetails,
          buyer: body.buyer ? JSON.stringify(body.buyer) : current.buyer,
        },
        idempotent(request, 'update'),
      );
      return reply.header('idempotency-key', idempotencyKeyOf(request)).send(await answer(scope, after));
    },
  });

  app.post('/checkout_sessions/:checkout_session_id/complete', {
    schema: {
      hide,
      tags,
      summary: 'ACP: complete a checkout session: place the order (stock reserved, payment token recorded, not captured)',
      headers: acpPostHeaders,
      params: sessionParams,
      body: completeSessionBody,
      response: { 200: checkoutSession, ...acpErrorResponses },
    },
    handler: async (request, reply) => {
      const scope = request.principal;
      const row = await readSession(scope, request.params.checkout_session_id);
      const payment = request.body.payment_data;
      const completed = await checkout.complete(
        request,
        row,
        {
          provider: payment.handler_id ?? 'purchase_order',
          transactionId: payment.instrument?.credential.token ?? payment.purchase_order_number ?? '',
        },
        request.body.buyer ? JSON.stringify(request.body.buyer) : null,
        idempotent(request, 'complete'),
      );
      return reply.header('idempotency-key', idempotencyKeyOf(request)).send(await answer(scope, completed));
    },
  });

  app.post('/checkout_sessions/:checkout_session_id/cancel', {
    schema: {
      hide,
      tags,
      summary: 'ACP: cancel a checkout session (405 once completed)',
      headers: acpPostHeaders,
      params: sessionParams,
      description: 'The body is optional (ACP `CancelSessionRequest`: an `intent_trace`), so the handler checks it.',
      response: { 200: checkoutSession, 405: acpErrorResponses[400], ...acpErrorResponses },
    },
    handler: async (request, reply) => {
      const scope = request.principal;
      if (!cancelSessionBody.safeParse(request.body ?? {}).success)
        throw new AcpError(400, 'invalid', 'the body may hold only an intent_trace', '$.intent_trace');
      const row = await readSession(scope, request.params.checkout_session_id);
      const after = await checkout.cancel(request, row, idempotent(request, 'cancel'));
      return reply.header('idempotency-key', idempotencyKeyOf(request)).send(await answer(scope, after));
    },
  });
}
