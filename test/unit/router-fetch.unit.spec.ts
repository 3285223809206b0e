import { describe, expect, it } from 'vitest';
import { aggregates } from '../../commands/index.ts';
import { orderAggregate } from '../../commands/oms/order.ts';
import { checkoutReservationRoute } from '../../consumers/checkout/checkout-reservation-route.ts';
import { orderFulfilmentRoute } from '../../consumers/order-fulfilment-route.ts';
import { skuRoute } from '../../consumers/sku-route.ts';
import { routerOf } from '../../ledger/processor-parts.ts';

describe('routerOf: how a router fetches beside the processors that run its route inline', () => {
  it.each([
    ['the order pipeline, run inline by the order and inventory processors', orderFulfilmentRoute, aggregates, 'batched'],
    ['the checkout reservation, run inline by the checkout session processor', checkoutReservationRoute, aggregates, 'batched'],
    ['the SKU counts, batched already (no processor runs it inline)', skuRoute, aggregates, 'batched'],
    ['the order pipeline where the inventory is decided by no processor of these', orderFulfilmentRoute, [orderAggregate], 'prompt'],
  ])('%s', (_, route, deciding, fetch) => {
    expect(routerOf(route, deciding).fetch ?? 'prompt').toBe(fetch);
  });

  it('leaves the route itself as it is', () => {
    expect(routerOf(orderFulfilmentRoute, aggregates).route).toBe(orderFulfilmentRoute.route);
    expect(orderFulfilmentRoute.fetch).toBeUndefined();
  });
});
