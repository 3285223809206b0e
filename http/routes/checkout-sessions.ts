import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { exactMinorUnits, shippingOf, type Cart, type CartLine, type ShippingOption } from '../../commands/acp/checkout-cart.ts';
import { checkoutSessionAggregate, checkoutSessionIdOf } from '../../commands/acp/checkout-session.ts';
import { orderPermalink } from '../../commands/acp/acp-order-event.ts';
import type { ReservationLine } from '../../commands/oms/inventory.ts';
import { orderAggregate, orderIdOf, reservationLines, type OrderLineRequest, type PlaceOrder } from '../../commands/oms/order.ts';
import type { CatalogFeedSettings } from '../../commands/ucp/feed-settings.ts';
import type { IdempotentRequest } from '../../ledger/message.ts';
import { findProduct, findVariant, type Scope } from '../../projections/catalog/catalog-queries.ts';
import { findCheckoutSession, type CheckoutSessionRow } from '../../projections/checkout/checkout-queries.ts';
import { feedSettingsOf, findCatalogFeed } from '../../projections/feed/feed-queries.ts';
import { omsProjection } from '../../projections/oms/oms-projection.ts';
import { findDecidedOrder, findOrder, findReservationAhead, listLevels } from '../../projections/oms/oms-queries.ts';
import { blockedProducts } from '../../projections/validation/validation-queries.ts';
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
import { canonical } from '../idempotency-key.ts';

/**
 * ACP Agentic Checkout (2026-04-17) over the ledger: a session is the checkout-session aggregate, priced here from the
 * catalog and the stock at the moment; completing it places an ordinary order through the order pipeline (reservation,
 * payment recorded from the delegated token, confirmation). Registered in a scope that authenticated the agent.
 */
export type CheckoutRoutesOptions = { publicBaseUrl: string };

const merchant = { tenant_id: z.string(), org_id: z.string() };
const sessionParams = z.object({ ...merchant, checkout_session_id: z.string() });

/** A session id is our UUID; anything else is a session that does not exist. */
const guid = z.guid();

const hashOf = (value: unknown): string =>
  createHash('sha256')
    .update(JSON.stringify(canonical(value)))
    .digest('base64url');

const keyOf = (request: FastifyRequest): string => String(request.headers['idempotency-key']);

/** The request's retry identity: what the client's key names on this aggregate, and the hash of the request. */
const idempotent = (request: FastifyRequest, operation: string): IdempotentRequest => ({
  key: `${operation}:${keyOf(request)}`,
  requestHash: hashOf({ operation, params: request.params, body: request.body ?? null }),
});

type Items = { id: string }[];

/** ACP items as (id, quantity): each entry is one unit, in the order ids first appear. */
const unitsOf = (items: Items): { id: string; quantity: number }[] => {
  const counts = new Map<string, number>();
  for (const { id } of items) counts.set(id, (counts.get(id) ?? 0) + 1);
  return [...counts].map(([id, quantity]) => ({ id, quantity }));
};

const STANDARD_SHIPPING = 'standard';

/** One flat-rate option, the feed settings' rate (none set: free), offered only in the rate's currency. */
const shippingOptions = (settings: CatalogFeedSettings | null, currency: string): ShippingOption[] => {
  if (settings?.shippingPrice && settings.shippingCurrency !== currency) return [];
  return [{ id: STANDARD_SHIPPING, title: 'Standard shipping', price: settings?.shippingPrice ?? '0' }];
};

export default async function checkoutSessionRoutes(fastify: FastifyInstance, { publicBaseUrl }: CheckoutRoutesOptions): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute, awaitOutcome } = app.ledger;
  const tags = ['agentic checkout (ACP)'];
  // Documented by the protocol's own OpenAPI (test/fixtures/acp), whose error objects they answer, not by ours.
  const hide = true;
  const orderUrl = (orderId: string) => orderPermalink(publicBaseUrl, orderId);

  const settingsOf = async (scope: Scope) => feedSettingsOf(await findCatalogFeed(db, scope));

  const available = async (scope: Scope, variantId: string): Promise<{ locationId: string; available: number }[]> =>
    (await listLevels(db, scope, { variant_id: variantId }))
      .map((level) => ({ locationId: level.location_id, available: level.available }))
      .filter((level) => level.available > 0)
      .sort((a, b) => b.available - a.available || (a.locationId < b.locationId ? -1 : 1));

  /** Prices each item from the catalog; an item checkout cannot sell is the agent's invalid request. */
  const priceLines = async (
    scope: Scope,
    items: { id: string; quantity: number }[],
    currency: string,
    field: string,
  ): Promise<CartLine[]> => {
    const blocked = await blockedProducts(db, scope);
    const lines: CartLine[] = [];
    for (const [index, { id, quantity }] of items.entries()) {
      const refuse = (why: string) => new AcpError(400, 'invalid', `item ${id} ${why}`, `$.${field}[${index}].id`);
      const variant = guid.safeParse(id).success ? await findVariant(db, scope, id.toLowerCase()) : undefined;
      const product = variant ? await findProduct(db, scope, variant.product_id) : undefined;
      if (!variant || !product) throw refuse('does not exist');
      if (product.status !== 'ACTIVE' || blocked.has(product.id)) throw refuse('is not for sale');
      if (!variant.price || variant.currency !== currency) throw refuse(`has no price in ${currency}`);
      if (exactMinorUnits(variant.price, currency) === undefined) throw refuse(`has a price finer than ${currency} minor units`);
      const stock = (await available(scope, variant.id)).reduce((sum, level) => sum + level.available, 0);
      lines.push({
        itemId: variant.id,
        productId: product.id,
        name: product.title,
        sku: variant.sku,
        quantity,
        unitPrice: variant.price,
        available: stock,
      });
    }
    return lines;
  };

  const readSession = async (scope: Scope, id: string): Promise<CheckoutSessionRow> => {
    const row = guid.safeParse(id).success ? await findCheckoutSession(db, scope, id.toLowerCase()) : undefined;
    if (!row) throw new AcpError(404, 'not_found', `checkout session ${id} not found`);
    return row;
  };

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
      const currency = body.currency.toUpperCase();
      const settings = await settingsOf(scope);
      const cart: Cart = {
        currency,
        lines: await priceLines(scope, unitsOf(body.line_items), currency, 'line_items'),
        shippingOptions: shippingOptions(settings, currency),
        selectedOptionId: null,
        fulfillmentDetails: body.fulfillment_details ? JSON.stringify(body.fulfillment_details) : null,
        buyer: body.buyer ? JSON.stringify(body.buyer) : null,
      };
      const sessionId = checkoutSessionIdOf(scope.tenantId, scope.orgId, keyOf(request));
      await execute(
        request,
        checkoutSessionAggregate,
        { type: 'OpenCheckoutSession', data: { sessionId, ...cart } },
        {
          key: sessionId,
          requestHash: idempotent(request, 'create').requestHash,
        },
      );
      return reply
        .code(201)
        .header('idempotency-key', keyOf(request))
        .send(await answer(scope, await readSession(scope, sessionId)));
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
      const items = body.line_items
        ? unitsOf(body.line_items)
        : current.lines.map((line) => ({ id: line.itemId, quantity: line.quantity }));
      const options = shippingOptions(await settingsOf(scope), current.currency);
      const selected = body.selected_fulfillment_options?.[0]?.option_id ?? current.selectedOptionId;
      if (selected !== null && !options.some((option) => option.id === selected))
        throw new AcpError(400, 'invalid', `fulfillment option ${selected} is not offered`, '$.selected_fulfillment_options[0].option_id');
      const cart: Cart = {
        currency: current.currency,
        lines: await priceLines(scope, items, current.currency, 'line_items'),
        shippingOptions: options,
        selectedOptionId: selected,
        fulfillmentDetails: body.fulfillment_details ? JSON.stringify(body.fulfillment_details) : current.fulfillmentDetails,
        buyer: body.buyer ? JSON.stringify(body.buyer) : current.buyer,
      };
      await execute(
        request,
        checkoutSessionAggregate,
        { type: 'ReviseCheckoutSession', data: { sessionId: row.id, ...cart } },
        idempotent(request, 'update'),
      );
      const after = await readSession(scope, row.id);
      if (after.status !== 'not_ready_for_payment' && after.status !== 'ready_for_payment')
        throw new AcpError(409, 'invalid_state', `a ${after.status} checkout session cannot be changed`);
      return reply.header('idempotency-key', keyOf(request)).send(await answer(scope, after));
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
      const done = async (completed: CheckoutSessionRow) =>
        reply.header('idempotency-key', keyOf(request)).send(await answer(scope, completed));
      if (row.status === 'completed') return done(row);
      // A retry while the order is being placed places the same one: its key names the session and the attempt.
      const orderKey = `checkout:${row.id}:${row.attempt}`;
      const orderId =
        row.status === 'complete_in_progress' && row.order_id ? row.order_id : orderIdOf(scope.tenantId, scope.orgId, orderKey);
      // What this request would reserve from the stock it reads now; the session keeps the first request's (its single writer).
      const planned = row.status === 'complete_in_progress' ? undefined : await reservedLines(scope, row.cart);
      const reservation = planned && planned.short.length === 0 ? reservationLines(planned.order) : null;
      const buyer = request.body.buyer ? JSON.stringify(request.body.buyer) : null;
      await execute(
        request,
        checkoutSessionAggregate,
        { type: 'StartCheckoutCompletion', data: { sessionId: row.id, orderId, attempt: row.attempt, buyer, reservation } },
        idempotent(request, 'complete'),
      );
      const started = await readSession(scope, row.id);
      if (started.order_id !== orderId || (started.status !== 'complete_in_progress' && started.status !== 'completed'))
        throw new AcpError(400, 'invalid_state', `a ${started.status} checkout session cannot be completed`);
      if (started.status === 'completed') return done(started);

      // Placed already (a retry after a crash, or another request for this completion): only its outcome is left to wait for.
      if (!(await findOrder(db, scope, orderId))) {
        const held = await reservedAhead(scope, started, orderId, planned?.short);
        if ('short' in held) return failCompletion(request, started, orderId, 'out_of_stock', held.short);
        await placeOrder(request, request.body.payment_data, started, orderId, orderKey, held.lines);
      }
      const order = await awaitOutcome(omsProjection.name, () => findDecidedOrder(db, scope, orderId));
      if (order.status === 'rejected') {
        const short = await stockOf(scope, started.cart);
        return failCompletion(request, started, orderId, order.rejection?.reason ?? 'rejected', short);
      }
      // Keyed by the order: every request that placed it completes the session once; the others wait for that completion.
      await execute(
        request,
        checkoutSessionAggregate,
        { type: 'CompleteCheckoutSession', data: { sessionId: started.id, orderId } },
        { key: `completed:${orderId}`, requestHash: orderId },
      );
      return done(await readSession(scope, started.id));
    },
  });

  /**
   * The stock reserved for the attempt before any order exists: the session's reservation, which the
   * checkout-reservation route asks of the inventory once under the order's id (consumers/checkout). Refused, or none
   * asked (the first request saw the stock short), no order is placed. `lines`: the order's lines, as reserved.
   */
  async function reservedAhead(
    scope: Scope,
    row: CheckoutSessionRow,
    orderId: string,
    seenShort: { itemId: string; available: number }[] | undefined,
  ): Promise<{ lines: OrderLineRequest[] } | { short: { itemId: string; available: number }[] }> {
    if (!row.reservation) return { short: seenShort?.length ? seenShort : await stockOf(scope, row.cart) };
    const reservation = await awaitOutcome(omsProjection.name, () => findReservationAhead(db, orderId));
    if (reservation.status === 'refused') return { short: await stockOf(scope, row.cart) };
    return { lines: orderLinesOf(row.cart, JSON.parse(row.reservation) as ReservationLine[]) };
  }

  /** Places the attempt's order on the stock reserved for it. */
  async function placeOrder(
    request: FastifyRequest,
    payment: z.infer<typeof completeSessionBody>['payment_data'],
    started: CheckoutSessionRow,
    orderId: string,
    orderKey: string,
    lines: OrderLineRequest[],
  ): Promise<void> {
    const place: PlaceOrder['data'] = {
      orderId,
      idempotencyKey: orderKey,
      // Constant per attempt: retries may split lines over locations differently, and must meet the first order.
      requestHash: createHash('sha256').update(orderKey).digest('hex'),
      currency: started.cart.currency,
      customerId: null,
      salesChannel: 'acp',
      platform: 'acp',
      paymentProvider: payment.handler_id ?? 'purchase_order',
      paymentTransactionId: payment.instrument?.credential.token ?? payment.purchase_order_number ?? '',
      tags: [`checkout_session:${started.id}`],
      discountTotal: '0',
      shippingTotal: shippingOf(started.cart),
      taxTotal: '0',
      lines,
      reservedAhead: true,
    };
    // The session's decider bounded the lines as the order's decider does (lines, units; the totals with the cart), so
    // the order is not refused as out of bounds after its stock was reserved.
    await execute(request, orderAggregate, { type: 'PlaceOrder', data: place }, undefined, { until: 'committed' });
  }

  /** The cart's lines as the reservation holds them: its variants, locations and quantities, in its order. */
  function orderLinesOf(cart: Cart, held: ReservationLine[]): OrderLineRequest[] {
    return [...held]
      .sort((a, b) => a.lineIndex - b.lineIndex)
      .map((reserved) => {
        const line = cart.lines.find((candidate) => candidate.itemId === reserved.variantId);
        if (!line) throw new Error(`the reservation holds variant ${reserved.variantId}, which the frozen cart does not have`);
        return {
          name: line.name,
          quantity: reserved.quantity,
          unitPrice: line.unitPrice,
          variantId: line.itemId,
          locationId: reserved.locationId,
          sku: line.sku,
          variantLabel: null,
          requiresShipment: true,
        };
      });
  }

  /** Each line split over the locations that hold it, most stocked first; `short`: lines the stock cannot cover now. */
  async function reservedLines(
    scope: Scope,
    cart: Cart,
  ): Promise<{ order: OrderLineRequest[]; short: { itemId: string; available: number }[] }> {
    const order: OrderLineRequest[] = [];
    const short: { itemId: string; available: number }[] = [];
    for (const line of cart.lines) {
      const levels = await available(scope, line.itemId);
      let wanted = line.quantity;
      for (const level of levels) {
        if (wanted === 0) break;
        const quantity = Math.min(wanted, level.available);
        wanted -= quantity;
        order.push({
          name: line.name,
          quantity,
          unitPrice: line.unitPrice,
          variantId: line.itemId,
          locationId: level.locationId,
          sku: line.sku,
          variantLabel: null,
          requiresShipment: true,
        });
      }
      if (wanted > 0) short.push({ itemId: line.itemId, available: line.quantity - wanted });
    }
    return { order, short };
  }

  async function stockOf(scope: Scope, cart: Cart): Promise<{ itemId: string; available: number }[]> {
    const stock = [];
    for (const line of cart.lines)
      stock.push({ itemId: line.itemId, available: (await available(scope, line.itemId)).reduce((sum, l) => sum + l.available, 0) });
    return stock;
  }

  /** Records why the attempt failed (the session reopens with the stock it met) and answers the protocol's error. */
  async function failCompletion(
    request: FastifyRequest,
    row: CheckoutSessionRow,
    orderId: string,
    reason: string,
    stock: { itemId: string; available: number }[],
  ): Promise<never> {
    const index = row.cart.lines.findIndex((line) => stock.some((s) => s.itemId === line.itemId && s.available < line.quantity));
    const line = row.cart.lines[Math.max(0, index)];
    const message = line ? `${line.name} is out of stock` : 'the order could not be placed';
    await execute(request, checkoutSessionAggregate, {
      type: 'FailCheckoutCompletion',
      data: { sessionId: row.id, orderId, reason, message, stock },
    });
    throw new AcpError(
      400,
      reason === 'out_of_stock' || index >= 0 ? 'out_of_stock' : 'processing_error',
      message,
      `$.line_items[${Math.max(0, index)}]`,
    );
  }

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
      await execute(
        request,
        checkoutSessionAggregate,
        { type: 'CancelCheckoutSession', data: { sessionId: row.id } },
        idempotent(request, 'cancel'),
      );
      const after = await readSession(scope, row.id);
      if (after.status !== 'canceled') throw new AcpError(405, 'not_cancelable', `a ${after.status} checkout session cannot be canceled`);
      return reply.header('idempotency-key', keyOf(request)).send(await answer(scope, after));
    },
  });
}
