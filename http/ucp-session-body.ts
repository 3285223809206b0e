import { cartProblems, type Cart } from '../commands/acp/checkout-cart.ts';
import { minorUnits, ucpAddressOf, ucpLinesOf, ucpTotalsOf } from '../commands/acp/ucp-cart.ts';
import type { CheckoutStatus } from '../commands/acp/checkout-session.ts';
import type { CatalogFeedSettings } from '../commands/ucp/feed-settings.ts';
import type { CheckoutSessionRow } from '../projections/checkout/checkout-queries.ts';
import { UCP_DESTINATION_PATH, UCP_OPTION_PATH } from './ucp-checkout-request.ts';
import type { UcpMessageError } from './ucp-edge.ts';
import { checkoutCapabilities, paymentHandlers, UCP_VERSION } from './ucp-profile-body.ts';
import type { UcpCheckout } from './ucp-schemas.ts';

/**
 * A session row as UCP's checkout (2026-04-08, with the fulfillment extension): amounts in minor units, the session's
 * status in UCP's words, what stops completion as `messages`, the shipping address and option under `fulfillment`.
 * Pure; the same session answers ACP's routes as ACP's `CheckoutSession` (http/acp-session-body.ts).
 */
export const UCP_STATUS: Record<CheckoutStatus, UcpCheckout['status']> = {
  not_ready_for_payment: 'incomplete',
  ready_for_payment: 'ready_for_complete',
  complete_in_progress: 'complete_in_progress',
  completed: 'completed',
  canceled: 'canceled',
};

const SHIPPING_METHOD = 'shipping';
const PACKAGE = 'package';
const DESTINATION = 'destination';

/** The cart's problems say where in ACP's session they are; in UCP's, the same thing is here. */
const ucpPath = (param: string): string =>
  param === '$.fulfillment_details.address' ? UCP_DESTINATION_PATH : param === '$.selected_fulfillment_options' ? UCP_OPTION_PATH : param;

/** UCP's well-known link types for the feed settings' pages. */
const policyLinks = (settings: CatalogFeedSettings | null): UcpCheckout['links'] =>
  (
    [
      ['terms_of_service', settings?.termsOfServiceUrl],
      ['privacy_policy', settings?.privacyPolicyUrl],
      ['refund_policy', settings?.returnPolicyUrl],
    ] as const
  ).flatMap(([type, url]) => (url ? [{ type, url }] : []));

/** The session's shipping address as the one destination of the shipping method. */
const destinationOf = (fulfillmentDetails: string | null): Record<string, string> | undefined => {
  const address = ucpAddressOf(fulfillmentDetails);
  return address ? { id: DESTINATION, ...address } : undefined;
};

export function ucpSessionBody(
  row: CheckoutSessionRow,
  settings: CatalogFeedSettings | null,
  orderUrl: (orderId: string) => string,
  extraMessages: UcpMessageError[] = [],
): UcpCheckout {
  const cart: Cart = row.cart;
  const { currency } = cart;
  const line_items = ucpLinesOf(cart).map(({ amount, ...line }) => ({
    ...line,
    totals: [
      { type: 'subtotal', amount },
      { type: 'total', amount },
    ],
  }));
  const lineIds = line_items.map((line) => line.id);
  const selected = cart.shippingOptions.find((option) => option.id === cart.selectedOptionId);
  const destination = destinationOf(cart.fulfillmentDetails);
  const open = row.status === 'not_ready_for_payment' || row.status === 'ready_for_payment';
  return {
    ucp: { version: UCP_VERSION, status: 'success', capabilities: checkoutCapabilities(), payment_handlers: paymentHandlers() },
    id: row.id,
    status: UCP_STATUS[row.status],
    currency,
    line_items,
    ...(cart.buyer ? { buyer: JSON.parse(cart.buyer) as Record<string, unknown> } : {}),
    totals: ucpTotalsOf(cart),
    // What stops completion matters only while the session can still be completed.
    messages: [
      ...(open
        ? cartProblems(cart).map(({ code, param, content }) => ({
            type: 'error' as const,
            code,
            content,
            severity: 'recoverable' as const,
            path: ucpPath(param),
          }))
        : []),
      ...extraMessages,
    ],
    links: policyLinks(settings),
    fulfillment: {
      methods: [
        {
          id: SHIPPING_METHOD,
          type: 'shipping' as const,
          line_item_ids: lineIds,
          destinations: destination ? [destination] : [],
          selected_destination_id: destination ? DESTINATION : null,
          groups: [
            {
              id: PACKAGE,
              line_item_ids: lineIds,
              selected_option_id: selected?.id ?? null,
              options: cart.shippingOptions.map((option) => ({
                id: option.id,
                title: option.title,
                totals: [{ type: 'total', amount: minorUnits(option.price, currency) }],
              })),
            },
          ],
        },
      ],
    },
    ...(row.status === 'completed' && row.order_id ? { order: { id: row.order_id, permalink_url: orderUrl(row.order_id) } } : {}),
  };
}
