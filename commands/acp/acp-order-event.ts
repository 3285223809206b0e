import { cartTotals, exactMinorUnits, type Cart } from './checkout-cart.ts';

/** Where an order of a checkout session is, for the agent: the order in our API (ACP `Order.permalink_url`). */
export const orderPermalink = (publicBaseUrl: string, orderId: string): string =>
  new URL(`/api/v1/oms/orders/${orderId}`, publicBaseUrl).toString();

/**
 * ACP's order webhook event (`WebhookEvent` of openapi.agentic_checkout_webhook.yaml, 2026-04-17) for a completed
 * session: `order_create` with the order as ACP's `Order`, its totals in minor units as the session showed them.
 */
export function orderCreatedEvent(publicBaseUrl: string, sessionId: string, orderId: string, cart: Cart) {
  return orderEvent('order_create', 'confirmed', publicBaseUrl, sessionId, orderId, cart);
}

/** ACP's `Order.status` for ours: the defined values where one means the same, else ours as it is (agents accept any). */
const acpStatus: Record<string, string> = { delivered: 'completed', cancelled: 'canceled' };

/** `order_update` once the order moved to `status` (processing, shipped, delivered, cancelled). */
export function orderUpdatedEvent(publicBaseUrl: string, sessionId: string, orderId: string, cart: Cart, status: string) {
  return orderEvent('order_update', acpStatus[status] ?? status, publicBaseUrl, sessionId, orderId, cart);
}

function orderEvent(type: string, status: string, publicBaseUrl: string, sessionId: string, orderId: string, cart: Cart) {
  const { subtotal, shippingTotal, total } = cartTotals(cart);
  const minor = (amount: string) => exactMinorUnits(amount, cart.currency) ?? 0;
  return {
    type,
    data: {
      type: 'order',
      id: orderId,
      checkout_session_id: sessionId,
      permalink_url: orderPermalink(publicBaseUrl, orderId),
      status,
      totals: [
        { type: 'subtotal', display_text: 'Subtotal', amount: minor(subtotal) },
        { type: 'fulfillment', display_text: 'Shipping', amount: minor(shippingTotal) },
        { type: 'total', display_text: 'Total', amount: minor(total) },
      ],
    },
  };
}
