import { orderPermalink } from './acp-order-event.ts';
import type { Cart } from './checkout-cart.ts';
import { UCP_VERSION, ucpAddressOf, ucpLinesOf, ucpTotalsOf } from './ucp-cart.ts';

/**
 * UCP's order (2026-04-08, `dev.ucp.shopping.order`, `order.json`) of a completed session, as the order webhook sends
 * it: the whole order as it stood after `moves`, never a delta. UCP's order has no status of its own; ours are told
 * the way its schema does: processing, shipped and delivered as fulfillment events (an append-only log, so each later
 * event repeats the earlier ones), shipped counting every unit fulfilled; cancelled as a `cancellation` adjustment
 * that takes every unit off the order (its lines `removed`). Pure.
 */
export const UCP_ORDER = 'dev.ucp.shopping.order';

/** An applied status change of the order after its confirmation, in the order's history order. */
export type OrderMove = { status: string; at: Date };

export type UcpOrderSource = { publicBaseUrl: string; sessionId: string; orderId: string; cart: Cart; moves: OrderMove[] };

const FULFILLMENT_EVENTS: Record<string, string> = { processing: 'processing', shipped: 'shipped', delivered: 'delivered' };
const PACKAGE = 'package';

/** UCP's derivation of a line's status from its counts (`order_line_item.json`). */
type LineStatus = 'processing' | 'partial' | 'fulfilled' | 'removed';
const lineStatus = (total: number, fulfilled: number): LineStatus =>
  total === 0 ? 'removed' : fulfilled === total ? 'fulfilled' : fulfilled > 0 ? 'partial' : 'processing';

export function ucpOrderOf({ publicBaseUrl, sessionId, orderId, cart, moves }: UcpOrderSource) {
  const lines = ucpLinesOf(cart);
  const cancelled = moves.find((move) => move.status === 'cancelled');
  const shipped = moves.some((move) => move.status === 'shipped' || move.status === 'delivered');
  const everyUnit = lines.map((line) => ({ id: line.id, quantity: line.quantity }));
  const destination = ucpAddressOf(cart.fulfillmentDetails);
  const option = cart.shippingOptions.find((candidate) => candidate.id === cart.selectedOptionId);
  return {
    ucp: { version: UCP_VERSION, capabilities: { [UCP_ORDER]: [{ version: UCP_VERSION }] } },
    id: orderId,
    checkout_id: sessionId,
    permalink_url: orderPermalink(publicBaseUrl, orderId),
    currency: cart.currency,
    line_items: lines.map(({ id, item, quantity, amount }) => {
      const total = cancelled ? 0 : quantity;
      const fulfilled = shipped ? total : 0;
      return {
        id,
        item,
        quantity: { original: quantity, total, fulfilled },
        totals: [
          { type: 'subtotal', amount },
          { type: 'total', amount },
        ],
        status: lineStatus(total, fulfilled),
      };
    }),
    fulfillment: {
      expectations: destination
        ? [
            {
              id: PACKAGE,
              line_items: everyUnit,
              method_type: 'shipping' as const,
              destination,
              ...(option ? { description: option.title } : {}),
            },
          ]
        : [],
      events: moves.flatMap((move) => {
        const type = FULFILLMENT_EVENTS[move.status];
        return type ? [{ id: `${orderId}/${type}`, occurred_at: move.at.toISOString(), type, line_items: everyUnit }] : [];
      }),
    },
    adjustments: cancelled
      ? [
          {
            id: `${orderId}/cancellation`,
            type: 'cancellation',
            occurred_at: cancelled.at.toISOString(),
            status: 'completed' as const,
            line_items: everyUnit.map(({ id, quantity }) => ({ id, quantity: -quantity })),
          },
        ]
      : [],
    totals: ucpTotalsOf(cart),
  };
}
