import { uuidv5 } from '../../ledger/uuid-v5.ts';
import { defineAggregate } from '../../ledger/aggregate.ts';
import { ConflictError, NotFoundError, ValidationError, type ErrorDetail } from '../../ledger/errors.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';
import type { ReservationLine } from './inventory.ts';
import { AMOUNT_RULE, isAmount } from '../amount.ts';
import { isWithinTotalLimit, MAX_TOTAL, orderTotals } from './money.ts';

/**
 * One order, keyed by UUIDv5(tenant, org, idempotency key). Lifecycle:
 * pending → confirmed | rejected; confirmed → processing → shipped → delivered;
 * confirmed | processing → cancelled. No skipping, no way back.
 */
const ORDER_NAMESPACE = 'c2a7e4d9-5b3f-4e1a-8c6d-1f9b2e7a4c30';
/** The idempotency key is scoped to the tenant's organization; the same key lands on the same order. */
export const orderIdOf = (tenantId: string, orgId: string, idempotencyKey: string): string =>
  uuidv5(`${tenantId}/${orgId}/${idempotencyKey}`, ORDER_NAMESPACE);

/**
 * An order's size: 250 lines of at most 10^6 units reserve at most 2.5 × 10^8 units of one level, within the
 * inventory's MAX_UNITS, and every quantity fits an Avro int and the read model.
 */
export const MAX_ORDER_LINES = 250;
export const MAX_LINE_QUANTITY = 1_000_000;
/** The longest line name and order tag, in UTF-16 code units; a mapped platform order is cut to fit. */
export const MAX_LINE_NAME = 500;
export const MAX_TAG = 100;

export type OrderStatus = 'pending' | 'confirmed' | 'rejected' | 'processing' | 'shipped' | 'delivered' | 'cancelled';
export type RequestableStatus = 'processing' | 'shipped' | 'delivered' | 'cancelled';

const transitions: Record<OrderStatus, readonly OrderStatus[]> = {
  pending: [],
  rejected: [],
  confirmed: ['processing', 'cancelled'],
  processing: ['shipped', 'cancelled'],
  shipped: ['delivered'],
  delivered: [],
  cancelled: [],
};

// ── Events ──────────────────────────────────────────────────────────────────
export type OrderLineRequest = {
  name: string;
  quantity: number;
  /** Exact decimal string in the order currency. */
  unitPrice: string;
  variantId: string | null;
  locationId: string | null;
  sku: string | null;
  variantLabel: string | null;
  requiresShipment: boolean;
};
export type OrderLine = OrderLineRequest & { lineTotal: string };

type OrderRequest = {
  orderId: string;
  idempotencyKey: string;
  /** SHA-256 of the normalized request: the same key with another request is a conflict. */
  requestHash: string;
  currency: string;
  customerId: string | null;
  salesChannel: string | null;
  platform: string | null;
  paymentProvider: string;
  paymentTransactionId: string;
  tags: string[];
  /** Its stock was reserved under its id before it was placed (ReserveStock `reservedAhead`): confirmed without reserving again. */
  reservedAhead?: boolean;
} & Charges;

type Charges = { discountTotal: string; shippingTotal: string; taxTotal: string };

export type OrderPlaced = Event<
  'OrderPlaced',
  Omit<OrderRequest, keyof Charges> & Charges & { lines: OrderLine[]; subtotal: string; total: string }
>;
export type OrderConfirmed = Event<'OrderConfirmed', { orderId: string; paymentStatus: string }>;
export type OrderRejected = Event<'OrderRejected', { orderId: string; reason: string; message: string; lineIndex: number | null }>;
/**
 * `reservationLines`: with a move to cancelled or shipped, the stock reservation that move ends (none for an order
 * without inventory-backed lines). The state machine ends a reservation at most once, so the inventory need not
 * remember which reservations it holds.
 */
export type OrderStatusChanged = Event<
  'OrderStatusChanged',
  { orderId: string; from: OrderStatus; to: OrderStatus; reservationLines?: ReservationLine[] }
>;
export type OrderStatusChangeRejected = Event<
  'OrderStatusChangeRejected',
  { orderId: string; current: OrderStatus; requested: string; reason: string }
>;

/**
 * No order will be placed under this id: the checkout completion that reserved its stock ahead gave up before placing
 * it (an agentic checkout swept, consumers/checkout/completion-sweeper.ts). `reservationLines`: the stock held ahead
 * under the id, released once (the order-fulfilment route). A later PlaceOrder with the id is refused.
 */
export type OrderWithdrawn = Event<'OrderWithdrawn', { orderId: string; reason: string; reservationLines: ReservationLine[] }>;

export type OrderEvent = OrderPlaced | OrderConfirmed | OrderRejected | OrderStatusChanged | OrderStatusChangeRejected | OrderWithdrawn;

// ── State ───────────────────────────────────────────────────────────────────
/** `reservationLines`: the stock the order holds (reserved on confirmation, until cancelled or shipped). */
/** `Withdrawn`: never placed, and never to be (its stock reserved ahead was released). */
export type Order =
  | { status: 'Empty' }
  | { status: 'Withdrawn' }
  | { status: 'Placed'; orderStatus: OrderStatus; requestHash: string; reservationLines: ReservationLine[] };

export const initialState = (): Order => ({ status: 'Empty' });

const withStatus = (state: Order, orderStatus: OrderStatus): Order => (state.status === 'Placed' ? { ...state, orderStatus } : state);

export const evolve = (state: Order, event: OrderEvent): Order => {
  switch (event.type) {
    case 'OrderPlaced':
      return {
        status: 'Placed',
        orderStatus: 'pending',
        requestHash: event.data.requestHash,
        reservationLines: reservationLines(event.data.lines),
      };
    case 'OrderConfirmed':
      return withStatus(state, 'confirmed');
    case 'OrderRejected':
      return state.status === 'Placed' ? { ...state, orderStatus: 'rejected', reservationLines: [] } : state;
    case 'OrderStatusChanged': {
      const next = withStatus(state, event.data.to);
      return next.status === 'Placed' && endsReservation(event.data.to) ? { ...next, reservationLines: [] } : next;
    }
    case 'OrderStatusChangeRejected':
      return state;
    case 'OrderWithdrawn':
      return state.status === 'Empty' ? { status: 'Withdrawn' } : state;
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

/** A move to one of these ends the order's stock reservation: released, or taken out of stock. */
const endsReservation = (status: OrderStatus): boolean => status === 'cancelled' || status === 'shipped';

/** The lines that hold stock: those with a variant (and so, by the field rules, a location). */
export const reservationLines = (lines: OrderLineRequest[]): ReservationLine[] =>
  lines.flatMap((line, lineIndex) =>
    line.variantId && line.locationId
      ? [{ lineIndex, variantId: line.variantId, locationId: line.locationId, quantity: line.quantity }]
      : [],
  );

// ── Commands ────────────────────────────────────────────────────────────────
export type PlaceOrder = Command<'PlaceOrder', OrderRequest & { lines: OrderLineRequest[] }>;
export type ConfirmOrder = Command<'ConfirmOrder', { orderId: string }>;
export type RejectOrder = Command<'RejectOrder', OrderRejected['data']>;
export type RequestOrderStatus = Command<'RequestOrderStatus', { orderId: string; status: RequestableStatus }>;
/** Gives up an order id whose stock was reserved ahead and whose order was not placed: refused once it is placed. */
export type WithdrawOrder = Command<'WithdrawOrder', OrderWithdrawn['data']>;

export type OrderCommand = PlaceOrder | ConfirmOrder | RejectOrder | RequestOrderStatus | WithdrawOrder;

// ── Decide ──────────────────────────────────────────────────────────────────
/** What the request carries, checked here too so that no command, from the edge or not, can place an order out of bounds. */
const requestProblems = (data: PlaceOrder['data']): ErrorDetail[] => {
  const problems: ErrorDetail[] = [];
  if (data.lines.length < 1 || data.lines.length > MAX_ORDER_LINES)
    problems.push({ path: 'body.line_items', message: `must hold 1..${MAX_ORDER_LINES} lines` });
  data.lines.forEach((line, index) => {
    const { quantity } = line;
    if (!Number.isInteger(quantity) || quantity < 1 || quantity > MAX_LINE_QUANTITY) {
      problems.push({ path: `body.line_items.${index}.quantity`, message: `must be an integer 1..${MAX_LINE_QUANTITY}` });
    }
    if (!isAmount(line.unitPrice)) problems.push({ path: `body.line_items.${index}.unit_price`, message: AMOUNT_RULE });
  });
  for (const [field, value] of [
    ['discount_total', data.discountTotal],
    ['shipping_total', data.shippingTotal],
    ['tax_total', data.taxTotal],
  ] as const) {
    if (!isAmount(value)) problems.push({ path: `body.${field}`, message: AMOUNT_RULE });
  }
  return problems;
};

const totalProblems = (lineTotals: string[], { subtotal, total }: { subtotal: string; total: string }): ErrorDetail[] => {
  const tooLarge = `must be below ${MAX_TOTAL}`;
  return [
    ...lineTotals.flatMap((lineTotal, index) =>
      isWithinTotalLimit(lineTotal) ? [] : [{ path: `body.line_items.${index}`, message: `line total ${lineTotal} ${tooLarge}` }],
    ),
    ...(isWithinTotalLimit(subtotal) ? [] : [{ path: 'body.line_items', message: `subtotal ${subtotal} ${tooLarge}` }]),
    ...(isWithinTotalLimit(total) ? [] : [{ path: 'body', message: `total ${total} ${tooLarge}` }]),
  ];
};

const place = ({ data }: PlaceOrder, state: Order): OrderEvent[] => {
  if (state.status === 'Withdrawn')
    throw new ConflictError(`order ${data.orderId} was withdrawn before it was placed: its reserved stock was released`, [
      { path: 'body.idempotency_key', message: 'withdrawn' },
    ]);
  if (state.status === 'Placed') {
    // The same key with the same request is the original order again: nothing new happens.
    if (state.requestHash === data.requestHash) return [];
    throw new ConflictError(`idempotency key ${data.idempotencyKey} was already used for a different order request`, [
      { path: 'body.idempotency_key', message: 'already used with a different request' },
    ]);
  }
  const invalid = requestProblems(data);
  if (invalid.length > 0) throw new ValidationError('the order is out of bounds', invalid);
  const { lineTotals, ...totals } = orderTotals(data.lines, data);
  if (totals.total.startsWith('-')) {
    throw new ValidationError('the order total would be negative', [
      { path: 'body.discount_total', message: 'exceeds subtotal + shipping_total + tax_total' },
    ]);
  }
  const tooLarge = totalProblems(lineTotals, totals);
  if (tooLarge.length > 0) throw new ValidationError(`the order's amounts must stay below ${MAX_TOTAL}`, tooLarge);
  const lines = data.lines.map((line, index) => ({ ...line, lineTotal: lineTotals[index] ?? '0.00' }));
  return [{ type: 'OrderPlaced', data: { ...data, lines, ...totals } }];
};

const pending = (state: Order, orderId: string): boolean => {
  if (state.status !== 'Placed') throw new NotFoundError(`order ${orderId} not found`);
  return state.orderStatus === 'pending';
};

const confirm = ({ data }: ConfirmOrder, state: Order): OrderEvent[] =>
  pending(state, data.orderId) ? [{ type: 'OrderConfirmed', data: { orderId: data.orderId, paymentStatus: 'authorized' } }] : [];

const reject = ({ data }: RejectOrder, state: Order): OrderEvent[] =>
  pending(state, data.orderId) ? [{ type: 'OrderRejected', data }] : [];

/** A refused transition is recorded, not thrown: the request was accepted with 202, so the history is where the client sees it. */
const requestStatus = ({ data }: RequestOrderStatus, state: Order): OrderEvent[] => {
  if (state.status !== 'Placed') throw new NotFoundError(`order ${data.orderId} not found`);
  const current = state.orderStatus;
  if (current === data.status) return [];
  if (!transitions[current].includes(data.status)) {
    const reason = `cannot move from ${current} to ${data.status}`;
    return [{ type: 'OrderStatusChangeRejected', data: { orderId: data.orderId, current, requested: data.status, reason } }];
  }
  // Snapshots taken before orders kept their reservation lack it.
  const ended = endsReservation(data.status) ? { reservationLines: state.reservationLines ?? [] } : {};
  return [{ type: 'OrderStatusChanged', data: { orderId: data.orderId, from: current, to: data.status, ...ended } }];
};

/** Once, and only before the order is placed: the single writer of the id decides between the order and its withdrawal. */
const withdraw = ({ data }: WithdrawOrder, state: Order): OrderEvent[] => {
  if (state.status === 'Withdrawn') return [];
  if (state.status === 'Placed') throw new ConflictError(`order ${data.orderId} is placed: it cannot be withdrawn`);
  return [{ type: 'OrderWithdrawn', data }];
};

export const decide = (command: OrderCommand, state: Order): OrderEvent[] => {
  switch (command.type) {
    case 'PlaceOrder':
      return place(command, state);
    case 'ConfirmOrder':
      return confirm(command, state);
    case 'RejectOrder':
      return reject(command, state);
    case 'RequestOrderStatus':
      return requestStatus(command, state);
    case 'WithdrawOrder':
      return withdraw(command, state);
    default: {
      const exhaustive: never = command;
      throw new Error(`unknown command ${JSON.stringify(exhaustive)}`);
    }
  }
};

export const orderDecider: Decider<OrderCommand, OrderEvent, Order> = { initialState, evolve, decide };

/** One order, keyed by UUIDv5 of tenant, org and idempotency key. */
export const orderAggregate = defineAggregate({
  name: 'order',
  stream: 'oms.order',
  decider: orderDecider,
  id: 'orderId',
  events: {
    namespace: 'commerce.ledger.oms',
    types: ['OrderPlaced', 'OrderConfirmed', 'OrderRejected', 'OrderStatusChanged', 'OrderStatusChangeRejected', 'OrderWithdrawn'],
  },
});
