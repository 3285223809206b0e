import type { PlaceOrder } from '../../commands/oms/order.ts';
import type { WithoutMetadata } from './decider-specification.ts';

/** A PlaceOrder as the edge sends it for a plain checkout (no discount, shipping or tax); `data` overrides any field. */
export const placeOrderCommand = (
  data: Pick<PlaceOrder['data'], 'orderId' | 'lines'> & Partial<PlaceOrder['data']>,
): WithoutMetadata<PlaceOrder> => ({
  type: 'PlaceOrder',
  data: {
    idempotencyKey: 'k1',
    requestHash: 'h1',
    currency: 'USD',
    customerId: null,
    salesChannel: null,
    platform: null,
    paymentProvider: 'stripe',
    paymentTransactionId: 'pi_12345678',
    tags: [],
    discountTotal: '0.00',
    shippingTotal: '0.00',
    taxTotal: '0.00',
    ...data,
  },
});
