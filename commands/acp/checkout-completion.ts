import { createHash } from 'node:crypto';
import type { IdempotentRequest } from '../../ledger/message.ts';
import type { ReservationLine } from '../oms/inventory.ts';
import type { WithdrawOrder } from '../oms/order.ts';
import type { Cart, StockSeen } from './checkout-cart.ts';
import type { CompleteCheckoutSession, FailCheckoutCompletion } from './checkout-session.ts';

/**
 * The steps that end a started checkout completion, as commands, whoever takes them: the edge, while the agent waits
 * (http/checkout-operations.ts), or the completion sweeper, for a completion nobody finished
 * (consumers/checkout/completion-sweeper.ts). Each is decided by a single writer under a deterministic id or key, so
 * the edge and the sweeper, or two of either, taking the same step reach the same outcome.
 */

/** The order key of a session's attempt: the order id is UUIDv5 of tenant, org and it; the request hash depends on it alone. */
export const completionOrderKey = (sessionId: string, attempt: number): string => `checkout:${sessionId}:${attempt}`;

/** Constant per attempt: retries may split lines over locations differently, and must meet the first order. */
export const completionRequestHash = (orderKey: string): string => createHash('sha256').update(orderKey).digest('hex');

/** Why a completion given up by the sweeper failed (`CheckoutCompletionFailed.reason`, `OrderWithdrawn.reason`). */
export const ABANDONED = 'abandoned';

/** Completes the session with its confirmed order; keyed by the order, so every taker completes it once. */
export const completeSession = (
  sessionId: string,
  orderId: string,
): { command: Pick<CompleteCheckoutSession, 'type' | 'data'>; retry: IdempotentRequest } => ({
  command: { type: 'CompleteCheckoutSession', data: { sessionId, orderId } },
  retry: { key: `completed:${orderId}`, requestHash: orderId },
});

/** What the agent is told of a failed completion: the first line the stock met short, else that no order was placed. */
export type CompletionRefusal = { code: 'out_of_stock' | 'processing_error'; message: string; param: string };

/**
 * Fails the attempt (the session reopens with the stock met, its attempt counted) and what the agent is told. The
 * session decides it only while this order is the one in progress, so a repeat changes nothing.
 */
export function failCompletion(
  session: { id: string; cart: Cart },
  orderId: string,
  reason: string,
  stock: StockSeen[],
): { command: Pick<FailCheckoutCompletion, 'type' | 'data'>; refusal: CompletionRefusal } {
  const { lines } = session.cart;
  const index = lines.findIndex((line) => stock.some((s) => s.itemId === line.itemId && s.available < line.quantity));
  const line = lines[Math.max(0, index)];
  // Given up with the stock there, nothing ran short: the order could not be placed.
  const message = line && (index >= 0 || reason !== ABANDONED) ? `${line.name} is out of stock` : 'the order could not be placed';
  return {
    command: { type: 'FailCheckoutCompletion', data: { sessionId: session.id, orderId, reason, message, stock } },
    refusal: {
      code: reason === 'out_of_stock' || index >= 0 ? 'out_of_stock' : 'processing_error',
      message,
      param: `$.line_items[${Math.max(0, index)}]`,
    },
  };
}

/**
 * Gives up the attempt's order before it is placed: the order's single writer refuses it once the order is placed, and
 * otherwise withdraws the id for good (a later PlaceOrder is refused) and releases the stock held ahead, once.
 * `reservation`: the session's (`CheckoutCompletionStarted.reservation`, JSON), which the inventory held.
 */
export const withdrawOrder = (orderId: string, reservation: string): Pick<WithdrawOrder, 'type' | 'data'> => ({
  type: 'WithdrawOrder',
  data: {
    orderId,
    reason: ABANDONED,
    reservationLines: (JSON.parse(reservation) as ReservationLine[]).map(({ lineIndex, variantId, locationId, quantity }) => ({
      lineIndex,
      variantId,
      locationId,
      quantity,
    })),
  },
});
