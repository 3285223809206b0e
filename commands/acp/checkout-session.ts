import type { ReservationLine } from '../oms/inventory.ts';
import { defineAggregate } from '../../ledger/aggregate.ts';
import { ConflictError, NotFoundError, ValidationError, type ErrorDetail } from '../../ledger/errors.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';
import { uuidv5 } from '../../ledger/uuid-v5.ts';
import { AMOUNT_RULE, isAmount } from '../amount.ts';
import { isWithinTotalLimit, MAX_TOTAL } from '../oms/money.ts';
import { MAX_LINE_QUANTITY, MAX_ORDER_LINES } from '../oms/order.ts';
import { cartProblems, cartTotals, MAX_CART_LINES, MAX_CART_QUANTITY, withStock, type Cart, type StockSeen } from './checkout-cart.ts';

/**
 * An agent's checkout session (ACP Agentic Checkout), keyed by UUIDv5 of tenant, org and the create's Idempotency-Key.
 * Lifecycle: not_ready_for_payment ⇄ ready_for_payment (each revision of the cart decides which) → complete_in_progress
 * (an order is being placed) → completed, or back when the order could not be placed; either open status → canceled.
 * A move the machine does not allow is recorded (CheckoutSessionChangeRefused), as orders record theirs.
 */
const CHECKOUT_SESSION_NAMESPACE = '3f0b7d52-8a1e-4c69-9e27-5d4c1b8a6f03';
export const checkoutSessionIdOf = (tenantId: string, orgId: string, idempotencyKey: string): string =>
  uuidv5(`${tenantId}/${orgId}/${idempotencyKey}`, CHECKOUT_SESSION_NAMESPACE);

export type CheckoutStatus = 'not_ready_for_payment' | 'ready_for_payment' | 'complete_in_progress' | 'completed' | 'canceled';
type Move = 'revise' | 'complete' | 'cancel';

const allowed: Record<CheckoutStatus, readonly Move[]> = {
  not_ready_for_payment: ['revise', 'cancel'],
  ready_for_payment: ['revise', 'complete', 'cancel'],
  complete_in_progress: [],
  completed: [],
  canceled: [],
};

// ── Events ──────────────────────────────────────────────────────────────────
type Priced = Cart & { status: 'not_ready_for_payment' | 'ready_for_payment'; subtotal: string; shippingTotal: string; total: string };
export type CheckoutSessionOpened = Event<'CheckoutSessionOpened', { sessionId: string } & Priced>;
export type CheckoutSessionRevised = Event<'CheckoutSessionRevised', { sessionId: string } & Priced>;
/**
 * `buyer`: what the agent sent with the completion (ACP `Buyer`, JSON), which replaces the session's; null: none sent.
 * `reservation`: the stock to reserve ahead of the order, under its id (JSON of `ReservationLine[]`), which the
 * checkout-reservation route asks of the inventory, once; null: the stock seen was short, nothing is asked.
 */
export type CheckoutCompletionStarted = Event<
  'CheckoutCompletionStarted',
  { sessionId: string; orderId: string; attempt: number; buyer?: string | null; reservation?: string | null }
>;
export type CheckoutSessionCompleted = Event<'CheckoutSessionCompleted', { sessionId: string; orderId: string }>;
export type CheckoutCompletionFailed = Event<
  'CheckoutCompletionFailed',
  {
    sessionId: string;
    orderId: string;
    reason: string;
    message: string;
    /** What each line's item had available when the order failed; the cart keeps it. */
    stock: StockSeen[];
    status: 'not_ready_for_payment' | 'ready_for_payment';
  }
>;
export type CheckoutSessionCanceled = Event<'CheckoutSessionCanceled', { sessionId: string }>;
export type CheckoutOrderNoticeRecorded = Event<
  'CheckoutOrderNoticeRecorded',
  { sessionId: string; orderId: string; delivered: boolean; attempts: number; detail: string | null }
>;
/** An `order_update` (the order's status moved to `status`) went to the agent's webhook, or could not: recorded once per status. */
export type CheckoutOrderUpdateNoticeRecorded = Event<
  'CheckoutOrderUpdateNoticeRecorded',
  { sessionId: string; orderId: string; status: string; delivered: boolean; attempts: number; detail: string | null }
>;
export type CheckoutSessionChangeRefused = Event<
  'CheckoutSessionChangeRefused',
  { sessionId: string; current: CheckoutStatus; requested: Move; reason: string }
>;

export type CheckoutSessionEvent =
  | CheckoutSessionOpened
  | CheckoutSessionRevised
  | CheckoutCompletionStarted
  | CheckoutSessionCompleted
  | CheckoutCompletionFailed
  | CheckoutSessionCanceled
  | CheckoutOrderNoticeRecorded
  | CheckoutOrderUpdateNoticeRecorded
  | CheckoutSessionChangeRefused;

// ── State ───────────────────────────────────────────────────────────────────
/** `attempt`: completions that failed so far; the next one places a new order (its key names the attempt). */
export type CheckoutSession =
  | { status: 'Empty' }
  | {
      status: 'Open';
      sessionStatus: CheckoutStatus;
      cart: Cart;
      attempt: number;
      orderId: string | null;
      noticed?: boolean;
      updatesNoticed?: string[];
    };

export const initialState = (): CheckoutSession => ({ status: 'Empty' });

const cartOf = ({ currency, lines, shippingOptions, selectedOptionId, fulfillmentDetails, buyer }: Cart): Cart => ({
  currency,
  lines,
  shippingOptions,
  selectedOptionId,
  fulfillmentDetails,
  buyer,
});

export const evolve = (state: CheckoutSession, event: CheckoutSessionEvent): CheckoutSession => {
  switch (event.type) {
    case 'CheckoutSessionOpened':
      return { status: 'Open', sessionStatus: event.data.status, cart: cartOf(event.data), attempt: 0, orderId: null };
    case 'CheckoutSessionRevised':
      return state.status === 'Open' ? { ...state, sessionStatus: event.data.status, cart: cartOf(event.data) } : state;
    case 'CheckoutCompletionStarted':
      return state.status === 'Open'
        ? {
            ...state,
            sessionStatus: 'complete_in_progress',
            orderId: event.data.orderId,
            cart: { ...state.cart, buyer: event.data.buyer ?? state.cart.buyer },
          }
        : state;
    case 'CheckoutSessionCompleted':
      return state.status === 'Open' ? { ...state, sessionStatus: 'completed', orderId: event.data.orderId } : state;
    case 'CheckoutCompletionFailed':
      return state.status === 'Open'
        ? {
            ...state,
            sessionStatus: event.data.status,
            cart: withStock(state.cart, event.data.stock),
            attempt: state.attempt + 1,
            orderId: null,
          }
        : state;
    case 'CheckoutSessionCanceled':
      return state.status === 'Open' ? { ...state, sessionStatus: 'canceled' } : state;
    case 'CheckoutOrderNoticeRecorded':
      return state.status === 'Open' ? { ...state, noticed: true } : state;
    case 'CheckoutOrderUpdateNoticeRecorded':
      return state.status === 'Open' ? { ...state, updatesNoticed: [...(state.updatesNoticed ?? []), event.data.status] } : state;
    case 'CheckoutSessionChangeRefused':
      return state;
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
export type OpenCheckoutSession = Command<'OpenCheckoutSession', { sessionId: string } & Cart>;
export type ReviseCheckoutSession = Command<'ReviseCheckoutSession', { sessionId: string } & Cart>;
/** `orderId`: the order this attempt places (its key names the session and the attempt, so a retry lands on it). */
export type StartCheckoutCompletion = Command<
  'StartCheckoutCompletion',
  Omit<CheckoutCompletionStarted['data'], 'reservation'> & { reservation?: ReservationLine[] | null }
>;
export type CompleteCheckoutSession = Command<'CompleteCheckoutSession', { sessionId: string; orderId: string }>;
export type FailCheckoutCompletion = Command<
  'FailCheckoutCompletion',
  { sessionId: string; orderId: string; reason: string; message: string; stock: StockSeen[] }
>;
export type CancelCheckoutSession = Command<'CancelCheckoutSession', { sessionId: string }>;
/** The outcome of the order_create notice to the agent's webhook; only the first is recorded. */
export type RecordCheckoutOrderNotice = Command<'RecordCheckoutOrderNotice', CheckoutOrderNoticeRecorded['data']>;
export type RecordCheckoutOrderUpdateNotice = Command<'RecordCheckoutOrderUpdateNotice', CheckoutOrderUpdateNoticeRecorded['data']>;

export type CheckoutSessionCommand =
  | OpenCheckoutSession
  | ReviseCheckoutSession
  | StartCheckoutCompletion
  | CompleteCheckoutSession
  | FailCheckoutCompletion
  | CancelCheckoutSession
  | RecordCheckoutOrderNotice
  | RecordCheckoutOrderUpdateNotice;

// ── Decide ──────────────────────────────────────────────────────────────────
/** The reservation as the event carries it; lines the inventory could not take (none, or no whole units) are refused here. */
const reservationOf = (lines: ReservationLine[] | null): string | null => {
  if (lines === null) return null;
  const bad = lines.findIndex(
    (line) =>
      !Number.isSafeInteger(line.quantity) || line.quantity < 1 || line.quantity > MAX_LINE_QUANTITY || !line.variantId || !line.locationId,
  );
  // The order placed on them must pass the order's own bounds (commands/oms/order.ts), once its stock is held.
  if (lines.length === 0 || lines.length > MAX_ORDER_LINES || bad >= 0)
    throw new ValidationError(`the stock to reserve must be 1..${MAX_ORDER_LINES} lines of whole units`, [
      { path: `reservation${bad >= 0 ? `.${bad}` : ''}`, message: `a variant, a location and 1..${MAX_LINE_QUANTITY} units` },
    ]);
  return JSON.stringify(lines.map(({ lineIndex, variantId, locationId, quantity }) => ({ lineIndex, variantId, locationId, quantity })));
};

const cartBounds = (cart: Cart): ErrorDetail[] => {
  const problems: ErrorDetail[] = [];
  if (cart.lines.length > MAX_CART_LINES) problems.push({ path: 'body.line_items', message: `must hold at most ${MAX_CART_LINES} items` });
  cart.lines.forEach((line, index) => {
    if (!Number.isInteger(line.quantity) || line.quantity < 1 || line.quantity > MAX_CART_QUANTITY)
      problems.push({ path: `body.line_items.${index}`, message: `quantity must be 1..${MAX_CART_QUANTITY}` });
    if (!isAmount(line.unitPrice)) problems.push({ path: `body.line_items.${index}`, message: `price ${AMOUNT_RULE}` });
  });
  cart.shippingOptions.forEach((option, index) => {
    if (!isAmount(option.price)) problems.push({ path: `fulfillment_options.${index}`, message: `price ${AMOUNT_RULE}` });
  });
  return problems;
};

const priced = (cart: Cart): Priced => {
  const invalid = cartBounds(cart);
  if (invalid.length > 0) throw new ValidationError('the checkout session is out of bounds', invalid);
  const { subtotal, shippingTotal, total } = cartTotals(cart);
  if (!isWithinTotalLimit(total))
    throw new ValidationError(`the session total must stay below ${MAX_TOTAL}`, [{ path: 'body', message: 'too large' }]);
  const status = cartProblems(cart).length === 0 ? 'ready_for_payment' : 'not_ready_for_payment';
  return { ...cartOf(cart), status, subtotal, shippingTotal, total };
};

const open = (state: CheckoutSession, sessionId: string) => {
  if (state.status !== 'Open') throw new NotFoundError(`checkout session ${sessionId} not found`);
  return state;
};

const refused = (sessionId: string, current: CheckoutStatus, requested: Move): CheckoutSessionEvent[] => [
  { type: 'CheckoutSessionChangeRefused', data: { sessionId, current, requested, reason: `a ${current} session cannot ${requested}` } },
];

export const decide = (command: CheckoutSessionCommand, state: CheckoutSession): CheckoutSessionEvent[] => {
  const { sessionId } = command.data;
  switch (command.type) {
    case 'OpenCheckoutSession': {
      // A retry with the same Idempotency-Key and request is recognized before the decider (ledger/idempotency.ts).
      if (state.status === 'Open')
        throw new ConflictError(`checkout session ${sessionId} already exists`, [
          { path: 'headers.idempotency-key', message: 'already used' },
        ]);
      const { sessionId: _, ...cart } = command.data;
      return [{ type: 'CheckoutSessionOpened', data: { sessionId, ...priced(cart) } }];
    }
    case 'ReviseCheckoutSession': {
      const session = open(state, sessionId);
      if (!allowed[session.sessionStatus].includes('revise')) return refused(sessionId, session.sessionStatus, 'revise');
      const { sessionId: _, ...cart } = command.data;
      return [{ type: 'CheckoutSessionRevised', data: { sessionId, ...priced(cart) } }];
    }
    case 'StartCheckoutCompletion': {
      const session = open(state, sessionId);
      if (session.sessionStatus === 'complete_in_progress' || session.sessionStatus === 'completed')
        return session.orderId === command.data.orderId ? [] : refused(sessionId, session.sessionStatus, 'complete');
      if (!allowed[session.sessionStatus].includes('complete') || command.data.attempt !== session.attempt)
        return refused(sessionId, session.sessionStatus, 'complete');
      const { orderId, buyer = null } = command.data;
      const reservation = reservationOf(command.data.reservation ?? null);
      return [{ type: 'CheckoutCompletionStarted', data: { sessionId, orderId, attempt: session.attempt, buyer, reservation } }];
    }
    case 'CompleteCheckoutSession': {
      const session = open(state, sessionId);
      if (session.sessionStatus === 'completed' && session.orderId === command.data.orderId) return [];
      if (session.sessionStatus !== 'complete_in_progress' || session.orderId !== command.data.orderId)
        return refused(sessionId, session.sessionStatus, 'complete');
      return [{ type: 'CheckoutSessionCompleted', data: { sessionId, orderId: command.data.orderId } }];
    }
    case 'FailCheckoutCompletion': {
      const session = open(state, sessionId);
      if (session.sessionStatus !== 'complete_in_progress' || session.orderId !== command.data.orderId) return [];
      const { status } = priced(withStock(session.cart, command.data.stock));
      const { orderId, reason, message, stock } = command.data;
      return [{ type: 'CheckoutCompletionFailed', data: { sessionId, orderId, reason, message, stock, status } }];
    }
    case 'CancelCheckoutSession': {
      const session = open(state, sessionId);
      if (session.sessionStatus === 'canceled') return [];
      if (!allowed[session.sessionStatus].includes('cancel')) return refused(sessionId, session.sessionStatus, 'cancel');
      return [{ type: 'CheckoutSessionCanceled', data: { sessionId } }];
    }
    case 'RecordCheckoutOrderNotice': {
      const session = open(state, sessionId);
      if (session.sessionStatus !== 'completed' || session.orderId !== command.data.orderId || session.noticed) return [];
      return [{ type: 'CheckoutOrderNoticeRecorded', data: command.data }];
    }
    case 'RecordCheckoutOrderUpdateNotice': {
      const session = open(state, sessionId);
      const { orderId, status } = command.data;
      if (session.sessionStatus !== 'completed' || session.orderId !== orderId || (session.updatesNoticed ?? []).includes(status))
        return [];
      return [{ type: 'CheckoutOrderUpdateNoticeRecorded', data: command.data }];
    }
    default: {
      const exhaustive: never = command;
      throw new Error(`unknown command ${JSON.stringify(exhaustive)}`);
    }
  }
};

export const checkoutSessionDecider: Decider<CheckoutSessionCommand, CheckoutSessionEvent, CheckoutSession> = {
  initialState,
  evolve,
  decide,
};

/** One agent checkout session, keyed by UUIDv5 of tenant, org and the create's Idempotency-Key. */
export const checkoutSessionAggregate = defineAggregate({
  name: 'checkout-session',
  stream: 'acp.checkout-session',
  decider: checkoutSessionDecider,
  id: 'sessionId',
  events: {
    namespace: 'commerce.ledger.acp',
    types: [
      'CheckoutSessionOpened',
      'CheckoutSessionRevised',
      'CheckoutCompletionStarted',
      'CheckoutSessionCompleted',
      'CheckoutCompletionFailed',
      'CheckoutSessionCanceled',
      'CheckoutOrderNoticeRecorded',
      'CheckoutOrderUpdateNoticeRecorded',
      'CheckoutSessionChangeRefused',
    ],
  },
});
