import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { exactMinorUnits, shippingOf, type Cart, type CartLine, type ShippingOption } from '../commands/acp/checkout-cart.ts';
import {
  ABANDONED,
  completeSession,
  completionOrderKey,
  completionRequestHash,
  failCompletion as failed,
} from '../commands/acp/checkout-completion.ts';
import { checkoutSessionAggregate } from '../commands/acp/checkout-session.ts';
import type { ReservationLine } from '../commands/oms/inventory.ts';
import { orderAggregate, orderIdOf, reservationLines, type OrderLineRequest, type PlaceOrder } from '../commands/oms/order.ts';
import type { CatalogFeedSettings } from '../commands/ucp/feed-settings.ts';
import type { IdempotentRequest } from '../ledger/message.ts';
import { findProduct, findVariant, type Scope } from '../projections/catalog/catalog-queries.ts';
import { findCheckoutSession, type CheckoutSessionRow } from '../projections/checkout/checkout-queries.ts';
import { availableAt, stockOf as stockNow } from '../projections/checkout/checkout-stock.ts';
import { feedSettingsOf, findCatalogFeed } from '../projections/feed/feed-queries.ts';
import { omsProjection } from '../projections/oms/oms-projection.ts';
import { findDecidedOrder, findOrder, findReservationAhead } from '../projections/oms/oms-queries.ts';
import { blockedProducts } from '../projections/validation/validation-queries.ts';
import { ConflictError } from '../ledger/errors.ts';
import { CheckoutRefused } from './checkout-refused.ts';
import { canonical } from './idempotency-key.ts';
import type { LedgerFacade } from './ledger-facade.ts';

/**
 * The checkout session's operations over the ledger, whichever protocol an agent speaks (ACP's routes in
 * http/routes/checkout-sessions.ts, UCP's in http/routes/ucp-checkout-sessions.ts): a session is the checkout-session
 * aggregate, priced here from the catalog and the stock at the moment; completing it places an ordinary order through
 * the order pipeline (stock reserved ahead, payment recorded from the delegated token, confirmation). A refusal the
 * agent can act on is a `CheckoutRefused`, which each protocol's edge answers in its own shape.
 */

/** An item of the cart as the agent asked for it: the variant id and how many units. */
export type CartItem = { id: string; quantity: number };
/** Where, in the protocol's request, the item at `index` is named (a refusal's `param`). */
export type ItemPath = (index: number) => string;
/** The delegated payment the order records: the handler as its provider, the token as its transaction id. */
export type RecordedPayment = { provider: string; transactionId: string };

/** A session id is our UUID; anything else is a session that does not exist. */
const guid = z.guid();

export const hashOf = (value: unknown): string =>
  createHash('sha256')
    .update(JSON.stringify(canonical(value)))
    .digest('base64url');

export const idempotencyKeyOf = (request: FastifyRequest): string => String(request.headers['idempotency-key']);

/** The request's retry identity: what the client's key names on this aggregate, and the hash of the request. */
export const idempotent = (request: FastifyRequest, operation: string): IdempotentRequest => ({
  key: `${operation}:${idempotencyKeyOf(request)}`,
  requestHash: hashOf({ operation, params: request.params, body: request.body ?? null }),
});

export const STANDARD_SHIPPING = 'standard';

/** One flat-rate option, the feed settings' rate (none set: free), offered only in the rate's currency. */
export const shippingOptions = (settings: CatalogFeedSettings | null, currency: string): ShippingOption[] => {
  if (settings?.shippingPrice && settings.shippingCurrency !== currency) return [];
  return [{ id: STANDARD_SHIPPING, title: 'Standard shipping', price: settings?.shippingPrice ?? '0' }];
};

const OPEN = new Set(['not_ready_for_payment', 'ready_for_payment']);

/** `channel`: the protocol the agent speaks, the order's sales channel and platform (`acp`, `ucp`). */
export function checkoutOperations(ledger: LedgerFacade, channel: 'acp' | 'ucp') {
  const { db, execute, awaitOutcome } = ledger;

  const settingsOf = async (scope: Scope) => feedSettingsOf(await findCatalogFeed(db, scope));

  const available = (scope: Scope, variantId: string) => availableAt(db, scope, variantId);
  const stockOf = (scope: Scope, cart: Cart) => stockNow(db, scope, cart);

  /** The currency of the item's price, when it is a variant of the tenant with one (UCP lets the merchant choose). */
  const currencyOf = async (scope: Scope, itemId: string): Promise<string | undefined> => {
    const variant = guid.safeParse(itemId).success ? await findVariant(db, scope, itemId.toLowerCase()) : undefined;
    return variant?.currency ?? undefined;
  };

  /** Prices each item from the catalog; an item checkout cannot sell is the agent's invalid request. */
  const priceLines = async (scope: Scope, items: CartItem[], currency: string, pathOf: ItemPath): Promise<CartLine[]> => {
    const blocked = await blockedProducts(db, scope);
    const lines: CartLine[] = [];
    for (const [index, { id, quantity }] of items.entries()) {
      const refuse = (why: string) => new CheckoutRefused(400, 'invalid', `item ${id} ${why}`, pathOf(index));
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
    if (!row) throw new CheckoutRefused(404, 'not_found', `checkout session ${id} not found`);
    return row;
  };

  /** What a new session holds besides its priced lines. */
  type Opening = {
    sessionId: string;
    currency: string;
    items: CartItem[];
    itemPath: ItemPath;
    selectedOptionId: string | null;
    fulfillmentDetails: string | null;
    buyer: string | null;
    requestHash: string;
  };

  /** Opens the session (its id names the create's key, so a retry meets it) and reads it back. */
  async function open(request: FastifyRequest, opening: Opening): Promise<CheckoutSessionRow> {
    const scope = request.principal;
    const { sessionId, currency, items, itemPath, selectedOptionId, fulfillmentDetails, buyer, requestHash } = opening;
    const cart: Cart = {
      currency,
      lines: await priceLines(scope, items, currency, itemPath),
      shippingOptions: shippingOptions(await settingsOf(scope), currency),
      selectedOptionId,
      fulfillmentDetails,
      buyer,
    };
    await execute(
      request,
      checkoutSessionAggregate,
      { type: 'OpenCheckoutSession', data: { sessionId, ...cart } },
      { key: sessionId, requestHash },
    );
    return readSession(scope, sessionId);
  }

  /** A revision: the items (priced again), the selected option (`selectedPath` names it when it is not offered), who and where. */
  type Revision = {
    items: CartItem[];
    itemPath: ItemPath;
    selectedOptionId: string | null;
    selectedPath: string;
    fulfillmentDetails: string | null;
    buyer: string | null;
  };

  async function revise(request: FastifyRequest, row: CheckoutSessionRow, revision: Revision, retry: IdempotentRequest) {
    const scope = request.principal;
    const current = row.cart;
    const options = shippingOptions(await settingsOf(scope), current.currency);
    const selected = revision.selectedOptionId;
    if (selected !== null && !options.some((option) => option.id === selected))
      throw new CheckoutRefused(400, 'invalid', `fulfillment option ${selected} is not offered`, revision.selectedPath);
    const cart: Cart = {
      currency: current.currency,
      lines: await priceLines(scope, revision.items, current.currency, revision.itemPath),
      shippingOptions: options,
      selectedOptionId: selected,
      fulfillmentDetails: revision.fulfillmentDetails,
      buyer: revision.buyer,
    };
    await execute(request, checkoutSessionAggregate, { type: 'ReviseCheckoutSession', data: { sessionId: row.id, ...cart } }, retry);
    const after = await readSession(scope, row.id);
    if (!OPEN.has(after.status)) throw new CheckoutRefused(409, 'invalid_state', `a ${after.status} checkout session cannot be changed`);
    return after;
  }

  /**
   * Completes the session: reserves its stock ahead, places the order on it, completes the session with the order.
   * Every retry and concurrent request reaches the same order (its key names the session and the attempt).
   */
  async function complete(
    request: FastifyRequest,
    row: CheckoutSessionRow,
    payment: RecordedPayment,
    buyer: string | null,
    retry: IdempotentRequest,
  ): Promise<CheckoutSessionRow> {
    const scope = request.principal;
    if (row.status === 'completed') return row;
    // A retry while the order is being placed places the same one: its key names the session and the attempt.
    const orderKey = completionOrderKey(row.id, row.attempt);
    const orderId = row.status === 'complete_in_progress' && row.order_id ? row.order_id : orderIdOf(scope.tenantId, scope.orgId, orderKey);
    // What this request would reserve from the stock it reads now; the session keeps the first request's (its single writer).
    const planned = row.status === 'complete_in_progress' ? undefined : await reservedLines(scope, row.cart);
    const reservation = planned && planned.short.length === 0 ? reservationLines(planned.order) : null;
    const executed = await execute(
      request,
      checkoutSessionAggregate,
      { type: 'StartCheckoutCompletion', data: { sessionId: row.id, orderId, attempt: row.attempt, buyer, reservation } },
      retry,
    );
    const started = await readSession(scope, row.id);
    if (started.order_id !== orderId || (started.status !== 'complete_in_progress' && started.status !== 'completed')) {
      // A retry of a completion that failed since (at its edge, or given up by the completion sweeper): that failure again.
      const failure = started.last_failure;
      if (executed.positions.length === 0 && OPEN.has(started.status) && failure) {
        const met = started.cart.lines.map((line) => ({ itemId: line.itemId, available: line.available }));
        const { refusal } = failed(started, failure.order_id, failure.reason, met);
        throw new CheckoutRefused(400, refusal.code, failure.message, refusal.param);
      }
      throw new CheckoutRefused(400, 'invalid_state', `a ${started.status} checkout session cannot be completed`);
    }
    if (started.status === 'completed') return started;

    // Placed already (a retry after a crash, or another request for this completion): only its outcome is left to wait for.
    if (!(await findOrder(db, scope, orderId))) {
      const held = await reservedAhead(scope, started, orderId, planned?.short);
      if ('short' in held) return failCompletion(request, started, orderId, 'out_of_stock', held.short);
      try {
        await placeOrder(request, payment, started, orderId, orderKey, held.lines);
      } catch (error) {
        // The completion sweeper gave this attempt up first (its order id withdrawn, the stock released): it failed.
        if (!(error instanceof ConflictError)) throw error;
        // The stock it met once the release shows, as the sweeper records it.
        await awaitOutcome(
          omsProjection.name,
          async () => ((await findReservationAhead(db, orderId))?.status === 'released' ? true : undefined),
          { key: orderId },
        );
        return failCompletion(request, started, orderId, ABANDONED, await stockOf(scope, started.cart));
      }
    }
    const order = await awaitOutcome(omsProjection.name, () => findDecidedOrder(db, scope, orderId), { key: orderId });
    if (order.status === 'rejected') {
      const short = await stockOf(scope, started.cart);
      return failCompletion(request, started, orderId, order.rejection?.reason ?? 'rejected', short);
    }
    // Keyed by the order: every request that placed it completes the session once; the others wait for that completion.
    const completion = completeSession(started.id, orderId);
    await execute(request, checkoutSessionAggregate, completion.command, completion.retry);
    return readSession(scope, started.id);
  }

  async function cancel(request: FastifyRequest, row: CheckoutSessionRow, retry: IdempotentRequest): Promise<CheckoutSessionRow> {
    await execute(request, checkoutSessionAggregate, { type: 'CancelCheckoutSession', data: { sessionId: row.id } }, retry);
    const after = await readSession(request.principal, row.id);
    if (after.status !== 'canceled')
      throw new CheckoutRefused(405, 'not_cancelable', `a ${after.status} checkout session cannot be canceled`);
    return after;
  }

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
    const reservation = await awaitOutcome(omsProjection.name, () => findReservationAhead(db, orderId), { key: orderId });
    if (reservation.status === 'refused') return { short: await stockOf(scope, row.cart) };
    return { lines: orderLinesOf(row.cart, JSON.parse(row.reservation) as ReservationLine[]) };
  }

  /** Places the attempt's order on the stock reserved for it. */
  async function placeOrder(
    request: FastifyRequest,
    payment: RecordedPayment,
    started: CheckoutSessionRow,
    orderId: string,
    orderKey: string,
    lines: OrderLineRequest[],
  ): Promise<void> {
    const place: PlaceOrder['data'] = {
      orderId,
      idempotencyKey: orderKey,
      // Constant per attempt: retries may split lines over locations differently, and must meet the first order.
      requestHash: completionRequestHash(orderKey),
      currency: started.cart.currency,
      customerId: null,
      salesChannel: channel,
      platform: channel,
      paymentProvider: payment.provider,
      paymentTransactionId: payment.transactionId,
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

  /** Records why the attempt failed (the session reopens with the stock it met) and refuses the completion. */
  async function failCompletion(
    request: FastifyRequest,
    row: CheckoutSessionRow,
    orderId: string,
    reason: string,
    stock: { itemId: string; available: number }[],
  ): Promise<never> {
    const { command, refusal } = failed(row, orderId, reason, stock);
    await execute(request, checkoutSessionAggregate, command);
    throw new CheckoutRefused(400, refusal.code, refusal.message, refusal.param);
  }

  return { settingsOf, currencyOf, readSession, open, revise, complete, cancel };
}

export type CheckoutOperations = ReturnType<typeof checkoutOperations>;
