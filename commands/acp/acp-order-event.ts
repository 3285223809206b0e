import { cartTotals, exactMinorUnits, type Cart } from './checkout-cart.ts';

/** Where an order of a checkout session is, for the agent: the order in our API (ACP `Order.permalink_url`). */
export const orderPermalink = (publicBaseUrl: string, orderId: string): string =>
  new URL(`/api/v1/oms/orders/${orderId}`, publicBaseUrl).toString();

/**
 * ACP's order webhook event (`WebhookEvent` of openapi.agentic_checkout_webhook.yaml, 2026-04-17) for a completed
 * session: `order_create` with the order as ACP's `Order`, its totals in minor units as the session showed them.
 */
export function orderCreatedEvent(publicBaseUrl: string, sessionId: string, orderId: string, cart: Cart) {
  const { subtotal, shippingTotal, total } = cartTotals(cart);
  const minor = (amount: string) => exactMinorUnits(amount, cart.currency) ?? 0;
  return {
    type: 'order_create',
    data: {
      type: 'order',
      id: orderId,
      checkout_session_id: sessionId,
      permalink_url: orderPermalink(publicBaseUrl, orderId),
      status: 'confirmed',
      totals: [
        { type: 'subtotal', display_text: 'Subtotal', amount: minor(subtotal) },
        { type: 'fulfillment', display_text: 'Shipping', amount: minor(shippingTotal) },
        { type: 'total', display_text: 'Total', amount: minor(total) },
      ],
    },
  };
}
