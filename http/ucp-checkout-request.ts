import type { CartItem, RecordedPayment } from './checkout-operations.ts';
import { CheckoutRefused } from './checkout-refused.ts';
import { TOKENIZED_CARD_HANDLER_ID } from './ucp-profile-body.ts';
import type { UcpBuyer, UcpFulfillmentRequest, UcpInstrument, UcpLineItemRequest } from './ucp-schemas.ts';

/**
 * A UCP checkout request (2026-04-08) as what the checkout session holds (pure): the items as variant ids and units,
 * the shipping destination as the session's fulfillment details (ACP `FulfillmentDetails`, the shape the merchant's
 * view and the order's session already read), the option chosen, and the payment the order records.
 */

/** Where a UCP request names the item of line `index`. */
export const ucpItemPath = (index: number) => `$.line_items[${index}].item.id`;
export const UCP_OPTION_PATH = '$.fulfillment.methods[0].groups[0].selected_option_id';
export const UCP_DESTINATION_PATH = '$.fulfillment.methods[0].destinations';

/** UCP line items as (id, quantity), in the order ids first appear; the same item on two lines is their sum. */
export function ucpItemsOf(lineItems: UcpLineItemRequest[]): CartItem[] {
  const counts = new Map<string, number>();
  for (const { item, quantity } of lineItems) counts.set(item.id, (counts.get(item.id) ?? 0) + quantity);
  return [...counts].map(([id, quantity]) => ({ id, quantity }));
}

const nameOf = (...parts: (string | undefined)[]): string => parts.filter((part) => part?.trim()).join(' ');

/**
 * The shipping choice of a UCP `fulfillment`: the destination (the selected one, or the only one) as ACP
 * `FulfillmentDetails` when it is a whole postal address (street, locality, country, postal code), and the option
 * selected in the method's first group. Shipping is the one method offered: a pickup, or a second method, is refused.
 */
export function ucpFulfillmentOf(
  fulfillment: UcpFulfillmentRequest | undefined,
  buyer: UcpBuyer | undefined,
): { fulfillmentDetails: string | null; selectedOptionId: string | null } {
  const methods = fulfillment?.methods ?? [];
  if (methods.length > 1)
    throw new CheckoutRefused(400, 'invalid', 'one fulfillment method, shipping, is offered', '$.fulfillment.methods');
  const [method] = methods;
  if (!method) return { fulfillmentDetails: null, selectedOptionId: null };
  if (method.type === 'pickup')
    throw new CheckoutRefused(
      400,
      'invalid',
      'pickup is not offered: shipping is the one fulfillment method',
      '$.fulfillment.methods[0].type',
    );
  const selectedOptionId = method.groups?.[0]?.selected_option_id ?? null;
  const destinations = method.destinations ?? [];
  const chosen = method.selected_destination_id
    ? destinations.find((destination) => destination.id === method.selected_destination_id)
    : destinations.length === 1
      ? destinations[0]
      : undefined;
  if (method.selected_destination_id && !chosen)
    throw new CheckoutRefused(
      400,
      'invalid',
      `destination ${method.selected_destination_id} is not among the destinations`,
      UCP_DESTINATION_PATH,
    );
  if (!chosen?.street_address || !chosen.address_locality || !chosen.address_country || !chosen.postal_code)
    return { fulfillmentDetails: null, selectedOptionId };
  const name = nameOf(chosen.first_name, chosen.last_name) || nameOf(buyer?.first_name, buyer?.last_name);
  const details = {
    ...(name ? { name } : {}),
    ...(chosen.phone_number ? { phone_number: chosen.phone_number } : {}),
    address: {
      name,
      line_one: chosen.street_address,
      ...(chosen.extended_address ? { line_two: chosen.extended_address } : {}),
      city: chosen.address_locality,
      state: chosen.address_region ?? '',
      country: chosen.address_country,
      postal_code: chosen.postal_code,
    },
  };
  return { fulfillmentDetails: JSON.stringify(details), selectedOptionId };
}

/**
 * The payment the order records from a completion's instruments: the selected one (or the only one) must be of our
 * handler (`card_tokenized`) and carry a token, the delegated credential the merchant's PSP captures with.
 */
export function ucpPaymentOf(instruments: UcpInstrument[]): RecordedPayment {
  const selected = instruments.filter((instrument) => instrument.selected === true);
  const index = selected.length === 1 ? instruments.indexOf(selected[0] as UcpInstrument) : instruments.length === 1 ? 0 : -1;
  const chosen = instruments[index];
  if (!chosen) throw new CheckoutRefused(400, 'payment_failed', 'select exactly one payment instrument', '$.payment.instruments');
  if (chosen.handler_id !== TOKENIZED_CARD_HANDLER_ID)
    throw new CheckoutRefused(
      400,
      'payment_failed',
      `payment handler ${chosen.handler_id} is not offered; use ${TOKENIZED_CARD_HANDLER_ID}`,
      `$.payment.instruments[${index}].handler_id`,
    );
  const token = chosen.credential?.token;
  if (!token)
    throw new CheckoutRefused(
      400,
      'payment_failed',
      'the instrument carries no token credential',
      `$.payment.instruments[${index}].credential`,
    );
  return { provider: chosen.handler_id, transactionId: token };
}
