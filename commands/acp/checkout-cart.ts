import { Decimal } from 'decimal.js';
import { orderTotals, type Totals } from '../oms/money.ts';
import { fractionDigits } from '../ucp/acp-product.ts';

/**
 * A checkout session's cart (ACP Agentic Checkout 2026-04-17): lines priced by the catalog at the moment they were
 * added or changed, the shipping options of the tenant's feed settings, and what the agent told us of the buyer and
 * where to ship. Pure: the edge reads the catalog and the stock and hands the decider the priced cart.
 */
export type CartLine = {
  /** ACP `Item.id`: the variant id, as the feed's `Variant.id` carries it. */
  itemId: string;
  productId: string;
  name: string;
  sku: string | null;
  quantity: number;
  /** Exact decimal string in the session currency, as the catalog holds it. */
  unitPrice: string;
  /** Units available over every location when priced. */
  available: number;
};

export type ShippingOption = { id: string; title: string; price: string };

export type Cart = {
  currency: string;
  lines: CartLine[];
  shippingOptions: ShippingOption[];
  selectedOptionId: string | null;
  /** ACP `FulfillmentDetails` and `Buyer` as the agent sent them, JSON text (null: not given). */
  fulfillmentDetails: string | null;
  buyer: string | null;
};

/** A session holds at most this many lines (an order takes 250) and this many units of one line. */
export const MAX_CART_LINES = 100;
export const MAX_CART_QUANTITY = 1_000;

export type CartProblem = {
  code: 'out_of_stock' | 'missing' | 'invalid';
  /** JSONPath into the session, as ACP messages name what they are about. */
  param: string;
  content: string;
};

const hasAddress = (details: string | null): boolean => {
  if (details === null) return false;
  const parsed = JSON.parse(details) as { address?: unknown };
  return typeof parsed.address === 'object' && parsed.address !== null;
};

/** What stops the cart from being paid for; none: `ready_for_payment`. */
export function cartProblems(cart: Cart): CartProblem[] {
  const problems: CartProblem[] = cart.lines.flatMap((line, index) =>
    line.quantity > line.available
      ? [{ code: 'out_of_stock' as const, param: `$.line_items[${index}]`, content: `only ${line.available} of ${line.name} in stock` }]
      : [],
  );
  if (cart.lines.length === 0) problems.push({ code: 'missing', param: '$.line_items', content: 'the cart is empty' });
  if (!hasAddress(cart.fulfillmentDetails))
    problems.push({ code: 'missing', param: '$.fulfillment_details.address', content: 'a shipping address is needed' });
  if (!cart.shippingOptions.some((option) => option.id === cart.selectedOptionId))
    problems.push({ code: 'missing', param: '$.selected_fulfillment_options', content: 'choose a fulfillment option' });
  return problems;
}

/** The selected option's price, "0" until one is selected. */
export const shippingOf = (cart: Cart): string => cart.shippingOptions.find((option) => option.id === cart.selectedOptionId)?.price ?? '0';

/** The cart's totals exactly as an order of the same lines and shipping computes them (no discount, no tax). */
export const cartTotals = (cart: Cart): Totals & { lineTotals: string[] } =>
  orderTotals(cart.lines, { discountTotal: '0', shippingTotal: shippingOf(cart), taxTotal: '0' });

/**
 * An amount in the currency's ISO 4217 minor units (ACP amounts are integers), or undefined when it is finer than they
 * are: such a price cannot be charged exactly, so its variant is not sold through checkout.
 */
export function exactMinorUnits(amount: string, currency: string): number | undefined {
  const units = new Decimal(amount).times(new Decimal(10).pow(fractionDigits(currency)));
  return units.isInteger() && units.abs().lte(Number.MAX_SAFE_INTEGER) ? units.toNumber() : undefined;
}

/** Units of an item available when an order of the cart was tried. */
export type StockSeen = { itemId: string; available: number };

/** The cart with the stock an order met, so the session says which line ran short. */
export const withStock = (cart: Cart, stock: StockSeen[]): Cart => ({
  ...cart,
  lines: cart.lines.map((line) => {
    const seen = stock.find((s) => s.itemId === line.itemId);
    return seen ? { ...line, available: seen.available } : line;
  }),
});
