import { cartTotals, exactMinorUnits, type Cart } from './checkout-cart.ts';

/**
 * A session's cart in UCP's words (2026-04-08), shared by the checkout the UCP routes answer (http/ucp-session-body.ts)
 * and the order the order webhook sends (ucp-order.ts): amounts in minor units, one line per item, the shipping
 * address as a UCP postal address.
 */
export const UCP_VERSION = '2026-04-08';

export const minorUnits = (amount: string, currency: string): number => {
  const units = exactMinorUnits(amount, currency);
  // The edge prices only variants whose price is exact in minor units, so totals of them are too.
  if (units === undefined) throw new Error(`${amount} ${currency} is not exact in minor units`);
  return units;
};

export const ucpLineItemId = (itemId: string) => `li_${itemId}`;

/** Each line's id, item (the catalog's title and unit price), quantity, and amount (its total). */
export function ucpLinesOf(cart: Cart) {
  const { lineTotals } = cartTotals(cart);
  return cart.lines.map((line, index) => ({
    id: ucpLineItemId(line.itemId),
    item: { id: line.itemId, title: line.name, price: minorUnits(line.unitPrice, cart.currency) },
    quantity: line.quantity,
    amount: minorUnits(lineTotals[index] ?? '0', cart.currency),
  }));
}

/** The cart's totals as UCP's `totals`: subtotal, shipping once an option is chosen, total. */
export function ucpTotalsOf(cart: Cart) {
  const { subtotal, shippingTotal, total } = cartTotals(cart);
  const selected = cart.shippingOptions.some((option) => option.id === cart.selectedOptionId);
  return [
    { type: 'subtotal', amount: minorUnits(subtotal, cart.currency) },
    ...(selected ? [{ type: 'fulfillment', amount: minorUnits(shippingTotal, cart.currency) }] : []),
    { type: 'total', amount: minorUnits(total, cart.currency) },
  ];
}

type AcpAddress = { name?: string; line_one: string; line_two?: string; city: string; state: string; country: string; postal_code: string };

/** The session's shipping address (ACP `FulfillmentDetails.address`, as the session keeps it) as a UCP postal address. */
export const ucpAddressOf = (fulfillmentDetails: string | null): Record<string, string> | undefined => {
  const details = fulfillmentDetails ? (JSON.parse(fulfillmentDetails) as { phone_number?: string; address?: AcpAddress }) : undefined;
  const address = details?.address;
  if (!address) return undefined;
  const [first, ...rest] = (address.name ?? '').trim().split(/\s+/).filter(Boolean);
  return {
    street_address: address.line_one,
    ...(address.line_two ? { extended_address: address.line_two } : {}),
    address_locality: address.city,
    ...(address.state ? { address_region: address.state } : {}),
    address_country: address.country,
    postal_code: address.postal_code,
    ...(first ? { first_name: first } : {}),
    ...(rest.length > 0 ? { last_name: rest.join(' ') } : {}),
    ...(details.phone_number ? { phone_number: details.phone_number } : {}),
  };
};
