import { describe, expect, it } from 'vitest';
import type { Cart } from '../../commands/acp/checkout-cart.ts';
import {
  ABANDONED,
  completeSession,
  completionOrderKey,
  completionRequestHash,
  failCompletion,
  withdrawOrder,
} from '../../commands/acp/checkout-completion.ts';

const line = (itemId: string, name: string, quantity: number) => ({
  itemId,
  productId: `p-${itemId}`,
  name,
  sku: null,
  quantity,
  unitPrice: '10.00',
  available: 10,
});
const cart: Cart = {
  currency: 'eur',
  lines: [line('a', 'Cup', 2), line('b', 'Pot', 1)],
  shippingOptions: [],
  selectedOptionId: null,
  fulfillmentDetails: null,
  buyer: null,
};
const session = { id: 's1', cart };

describe('the steps that end a checkout completion (edge and sweeper alike)', () => {
  it('keys the order by session and attempt, and its request hash by that key alone', () => {
    expect(completionOrderKey('s1', 2)).toBe('checkout:s1:2');
    expect(completionRequestHash('checkout:s1:2')).toBe(completionRequestHash('checkout:s1:2'));
    expect(completionRequestHash('checkout:s1:2')).not.toBe(completionRequestHash('checkout:s1:3'));
  });

  it('completes the session keyed by its order', () => {
    expect(completeSession('s1', 'o1')).toEqual({
      command: { type: 'CompleteCheckoutSession', data: { sessionId: 's1', orderId: 'o1' } },
      retry: { key: 'completed:o1', requestHash: 'o1' },
    });
  });

  it('names the first line the stock met short; a given-up completion with the stock there could not be placed', () => {
    const short = [
      { itemId: 'a', available: 5 },
      { itemId: 'b', available: 0 },
    ];
    expect(failCompletion(session, 'o1', 'out_of_stock', short).refusal).toEqual({
      code: 'out_of_stock',
      message: 'Pot is out of stock',
      param: '$.line_items[1]',
    });
    const there = [
      { itemId: 'a', available: 5 },
      { itemId: 'b', available: 5 },
    ];
    const abandoned = failCompletion(session, 'o1', ABANDONED, there);
    expect(abandoned.refusal).toEqual({ code: 'processing_error', message: 'the order could not be placed', param: '$.line_items[0]' });
    expect(abandoned.command).toEqual({
      type: 'FailCheckoutCompletion',
      data: { sessionId: 's1', orderId: 'o1', reason: ABANDONED, message: 'the order could not be placed', stock: there },
    });
    expect(failCompletion(session, 'o1', ABANDONED, short).refusal.code).toBe('out_of_stock');
  });

  it('withdraws the order with exactly the reservation the session recorded', () => {
    const held = [{ lineIndex: 0, variantId: 'v', locationId: 'l', quantity: 2 }];
    expect(withdrawOrder('o1', JSON.stringify(held))).toEqual({
      type: 'WithdrawOrder',
      data: { orderId: 'o1', reason: ABANDONED, reservationLines: held },
    });
  });
});
