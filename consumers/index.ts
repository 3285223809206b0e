import type { EventRoute } from '../ledger/event-router.ts';
import { checkoutReservationRoute } from './checkout/checkout-reservation-route.ts';
import { orderFulfilmentRoute } from './order-fulfilment-route.ts';
import { skuRoute } from './sku-route.ts';

/** Stream processors that turn events into commands for other aggregates; each runs as its own consumer group. */
export const eventRoutes: EventRoute[] = [skuRoute, orderFulfilmentRoute, checkoutReservationRoute];
