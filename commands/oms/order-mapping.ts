import { createHash } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { validate as isUuid } from 'uuid';
import { ORDER_CREATED_EVENTS, ORDER_UPDATED_EVENTS } from '../integrations/inbox.ts';
import { MAX_LINE_NAME, MAX_LINE_QUANTITY, MAX_ORDER_LINES, MAX_TAG, orderIdOf, type PlaceOrder, type RequestableStatus } from './order.ts';
import { AMOUNT_RULE, DECIMAL_TEXT, isWithinAmountBound } from '../amount.ts';
import { amount } from './money.ts';

/**
 * Consecutive inbox events of a partition the order mapping maps side by side: their commands go out together (one
 * external order's events still one after another). A slice that fails is retried whole, its mapped events skipped.
 */
export const MAPPED_AT_ONCE = 64;

/**
 * The order mapping's pure part: a platform order (the `data` of an order webhook) read and checked, then turned into
 * our PlaceOrder. The worker (order-mapping-worker.ts) looks up what this needs from the read models and sends it.
 * See docs/decisions.md "Order mapping (issue 12)".
 */

export type MappingKind = 'created' | 'updated';

/** Which webhooks become orders: the spec's event kinds and the shorter spellings; every other kind is stored only. */
export const mappingKindOf = (event: string): MappingKind | null =>
  ORDER_CREATED_EVENTS.includes(event) ? 'created' : ORDER_UPDATED_EVENTS.includes(event) ? 'updated' : null;

/** A line as the platform gave it: its item, its variant (Unified's `item_variants`), SKU, name, quantity and price. */
export type PlatformLine = {
  itemId: string | null;
  variantId: string | null;
  sku: string | null;
  name: string;
  quantity: number;
  unitPrice: string;
};

export type PlatformOrder = {
  externalId: string;
  currency: string;
  lines: PlatformLine[];
  status: string | null;
  customerId: string | null;
  paymentTransactionId: string | null;
  discountTotal: string;
  shippingTotal: string;
  taxTotal: string;
};

export type Parsed = { ok: true; order: PlatformOrder } | { ok: false; reason: string };

/**
 * ISO 4217 as the runtime's ICU knows it: a well-formed but unknown code is refused like a malformed one. Read at the
 * first order mapped, not at start: ICU's currency data is 5 MB of the binary's pages a process without orders never maps.
 */
let iso4217: Set<string> | undefined;
const isIso4217 = (code: string) => (iso4217 ??= new Set(Intl.supportedValuesOf('currency'))).has(code);

type Obj = Record<string, unknown>;
const isObject = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);
/** A platform's id as text: strings as given, integers too (some platforms number their ids). */
const idText = (value: unknown): string | null =>
  typeof value === 'string' && value.trim() !== ''
    ? value.trim()
    : typeof value === 'number' && Number.isSafeInteger(value)
      ? String(value)
      : null;
const optionalText = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

class Unmappable extends Error {}

/**
 * An amount as exact decimal text: a JSON number is read back from its shortest text (what the platform wrote for
 * every number a double holds exactly enough, e.g. 19.99), a string as given; then decimal arithmetic only.
 */
export function exactAmount(value: unknown, path: string): string {
  let decimal: Decimal;
  try {
    if (typeof value === 'number' && Number.isFinite(value)) decimal = new Decimal(String(value));
    else if (typeof value === 'string' && DECIMAL_TEXT.test(value.trim())) decimal = new Decimal(value.trim());
    else throw new Unmappable(`${path} must be a number`);
  } catch (error) {
    if (error instanceof Unmappable) throw error;
    throw new Unmappable(`${path} must be a number`);
  }
  if (!isWithinAmountBound(decimal)) throw new Unmappable(`${path} ${AMOUNT_RULE} (got ${String(value)})`);
  return amount(decimal);
}

const charge = (data: Obj, field: string): string =>
  data[field] === undefined || data[field] === null ? '0.00' : exactAmount(data[field], `data.${field}`);

/**
 * The two spellings of an order line: the spec's (`line_items[]` of `{ item_id, sku, name, quantity, unit_amount }`) and
 * Unified's `AccountingOrder` (`lineitems[]` of `{ item_id, item_sku, item_name, unit_quantity, unit_amount,
 * item_variants: [{ id }] }`).
 */
type LineFields = { list: string; quantity: string; sku: string; name: string };
const SPEC_LINES: LineFields = { list: 'line_items', quantity: 'quantity', sku: 'sku', name: 'name' };
const UNIFIED_LINES: LineFields = { list: 'lineitems', quantity: 'unit_quantity', sku: 'item_sku', name: 'item_name' };

function parseLine(value: unknown, index: number, fields: LineFields): PlatformLine {
  const path = `data.${fields.list}.${index}`;
  if (!isObject(value)) throw new Unmappable(`${path} must be an object`);
  const quantity = value[fields.quantity];
  if (typeof quantity !== 'number' || !Number.isInteger(quantity) || quantity < 1 || quantity > MAX_LINE_QUANTITY)
    throw new Unmappable(
      `${path}.${fields.quantity} must be an integer 1..${MAX_LINE_QUANTITY} (got ${JSON.stringify(quantity) ?? 'nothing'})`,
    );
  if (value.unit_amount === undefined || value.unit_amount === null) throw new Unmappable(`${path}.unit_amount is missing`);
  const unitPrice = exactAmount(value.unit_amount, `${path}.unit_amount`);
  const itemId = idText(value.item_id);
  const variants = Array.isArray(value.item_variants) ? value.item_variants : [];
  const variantId = idText(isObject(variants[0]) ? variants[0].id : undefined);
  const sku = optionalText(value[fields.sku]);
  const name = (optionalText(value[fields.name]) ?? sku ?? itemId ?? `line ${index + 1}`).slice(0, MAX_LINE_NAME);
  return { itemId, variantId, sku, name, quantity, unitPrice };
}

/** Unified's order charges sit on its lines: the order's discount and tax are theirs summed. */
function lineCharge(lines: unknown[], field: string): string {
  let total = new Decimal(0);
  lines.forEach((line, index) => {
    const value = isObject(line) ? line[field] : undefined;
    if (value !== undefined && value !== null) total = total.plus(exactAmount(value, `data.lineitems.${index}.${field}`));
  });
  return exactAmount(total.toString(), `data.lineitems.*.${field}`);
}

/**
 * The platform order in an order webhook's `data` (JSON text), or why it can never be mapped. `externalId`: the
 * inbox's `data.id` as text.
 */
export function parsePlatformOrder(payload: string, externalId: string | null): Parsed {
  try {
    let data: unknown;
    try {
      data = JSON.parse(payload);
    } catch {
      throw new Unmappable('data is not JSON');
    }
    if (!isObject(data)) throw new Unmappable('data must be an object');
    const id = externalId ?? idText(data.id);
    if (id === null) throw new Unmappable('data.id is missing: the order has no external id to be deduplicated by');
    let currency = 'USD';
    if (data.currency !== undefined && data.currency !== null) {
      const code = typeof data.currency === 'string' ? data.currency.trim().toUpperCase() : '';
      if (!/^[A-Z]{3}$/.test(code) || !isIso4217(code))
        throw new Unmappable(`data.currency ${JSON.stringify(data.currency)} is not an ISO 4217 currency code`);
      currency = code;
    }
    const fields = data.line_items === undefined && Array.isArray(data.lineitems) ? UNIFIED_LINES : SPEC_LINES;
    const items = data[fields.list];
    if (!Array.isArray(items) || items.length === 0) throw new Unmappable(`data.${fields.list} must be a non-empty array`);
    if (items.length > MAX_ORDER_LINES)
      throw new Unmappable(`data.${fields.list} holds ${items.length} lines; an order holds at most ${MAX_ORDER_LINES}`);
    const lines = items.map((line, index) => parseLine(line, index, fields));
    const payment = isObject(data.payment) ? data.payment : {};
    const unified = fields === UNIFIED_LINES;
    return {
      ok: true,
      order: {
        externalId: id,
        currency,
        lines,
        status: optionalText(data.status),
        customerId: idText(data.customer_id) ?? idText(data.contact_id),
        paymentTransactionId: idText(data.payment_transaction_id) ?? idText(payment.transaction_id),
        discountTotal: unified ? lineCharge(items, 'discount_amount') : charge(data, 'discount_amount'),
        shippingTotal: charge(data, 'shipping_amount'),
        taxTotal: unified ? lineCharge(items, 'tax_amount') : charge(data, 'tax_amount'),
      },
    };
  } catch (error) {
    if (error instanceof Unmappable) return { ok: false, reason: error.message };
    throw error;
  }
}

/** The spec's dedupe key: the connection (the provider's id) and the external order id. */
export const mappedIdempotencyKey = (unifiedConnectionId: string, externalId: string): string =>
  `unified:${unifiedConnectionId}:${externalId}`;

export const mappedOrderId = (tenantId: string, orgId: string, unifiedConnectionId: string, externalId: string): string =>
  orderIdOf(tenantId, orgId, mappedIdempotencyKey(unifiedConnectionId, externalId));

/** One of our variants a platform line was matched to (by item id, else by SKU); null when none was found. */
export type LineMatch = { variantId: string; sku: string | null } | null;

export type MappingContext = {
  tenantId: string;
  orgId: string;
  unifiedConnectionId: string;
  /** The connection's platform: the order's sales channel, platform and payment provider. */
  provider: string;
  defaultLocationId: string | null;
  /** One per line, in order. */
  matches: LineMatch[];
};

/** Order tags that flag what the mapping could not do, visible in GET /api/v1/oms/orders. */
export const UNMATCHED_TAG = 'unmatched-lines';
export const unmatchedLineTag = (index: number): string => `unmatched-line:${index}`;
export const NO_LOCATION_TAG = 'no-fulfilment-location';

const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical);
  if (isObject(value))
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, canonical(v)]),
    );
  return value;
};

/** SHA-256 of the mapped request (everything but its hash), canonical: the same platform order maps to the same hash. */
export const requestHashOf = (request: Omit<PlaceOrder['data'], 'requestHash'>): string =>
  createHash('sha256')
    .update(JSON.stringify(canonical(request)))
    .digest('hex');

/**
 * Our order for a platform order. A matched line is inventory-backed (variant and location) when the connection has
 * a default location; without one the order rules allow no variant (a variant needs a location), so it keeps the SKU
 * and name only and the order is tagged `no-fulfilment-location`. An unmatched line is a non-inventory line, and the
 * order is tagged `unmatched-lines` and `unmatched-line:<index>` per such line.
 */
export function placeOrderFrom(order: PlatformOrder, context: MappingContext): PlaceOrder['data'] {
  const { tenantId, orgId, unifiedConnectionId, provider, defaultLocationId, matches } = context;
  const tags: string[] = [];
  const unmatched: string[] = [];
  let unlocated = false;
  const lines = order.lines.map((line, index) => {
    const match = matches[index] ?? null;
    if (!match) unmatched.push(unmatchedLineTag(index));
    else if (!defaultLocationId) unlocated = true;
    const backed = match !== null && defaultLocationId !== null;
    return {
      name: line.name,
      quantity: line.quantity,
      unitPrice: line.unitPrice,
      variantId: backed ? match.variantId : null,
      locationId: backed ? defaultLocationId : null,
      sku: line.sku ?? match?.sku ?? null,
      variantLabel: null,
      requiresShipment: true,
    };
  });
  if (unmatched.length > 0) tags.push(UNMATCHED_TAG, ...unmatched);
  if (unlocated) tags.push(NO_LOCATION_TAG);
  // Our orders name customers by uuid; another id of the platform's is kept as a tag rather than dropped.
  const customerId = order.customerId !== null && isUuid(order.customerId) ? order.customerId.toLowerCase() : null;
  if (order.customerId !== null && customerId === null) tags.push(`customer:${order.customerId}`.slice(0, MAX_TAG));
  const idempotencyKey = mappedIdempotencyKey(unifiedConnectionId, order.externalId);
  const request = {
    orderId: orderIdOf(tenantId, orgId, idempotencyKey),
    idempotencyKey,
    currency: order.currency,
    customerId,
    salesChannel: provider,
    platform: provider,
    paymentProvider: provider,
    paymentTransactionId: order.paymentTransactionId ?? `${unifiedConnectionId}:${order.externalId}`,
    tags,
    discountTotal: order.discountTotal,
    shippingTotal: order.shippingTotal,
    taxTotal: order.taxTotal,
    lines,
  };
  return { ...request, requestHash: requestHashOf(request) };
}

const STATUS_MAP: Record<string, RequestableStatus> = {
  cancelled: 'cancelled',
  canceled: 'cancelled',
  voided: 'cancelled',
  processing: 'processing',
  in_progress: 'processing',
  fulfilled: 'shipped',
  shipped: 'shipped',
  completed: 'delivered',
  delivered: 'delivered',
  // Unified's AccountingOrderStatus: VOIDED, CANCELED and COMPLETED above; DRAFT, OPEN, AUTHORIZED, PAID… mean no move.
};

/** The status an update asks our order to move to, or null for a platform status that means no move (e.g. `paid`). */
export const requestedStatusOf = (status: string | null): RequestableStatus | null =>
  status === null
    ? null
    : (STATUS_MAP[
        status
          .trim()
          .toLowerCase()
          .replace(/[\s-]+/g, '_')
      ] ?? null);
