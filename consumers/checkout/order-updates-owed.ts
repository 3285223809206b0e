import type { Knex } from 'knex';
import type { Cart } from '../../commands/acp/checkout-cart.ts';
import { liveSchema } from '../../ledger/projection.ts';
import { checkoutProjection } from '../../projections/checkout/checkout-projection.ts';
import { omsProjection } from '../../projections/oms/oms-projection.ts';

export type OwedOrderUpdate = {
  id: string;
  tenant_id: string;
  org_id: string;
  order_id: string;
  cart: Cart;
  webhook_url: string;
  status: string;
};

/**
 * Status changes of completed sessions' orders (the order read model's applied history after confirmation) that have
 * no recorded order_update notice, once the session's order_create has gone: the agent hears of the order first.
 */
export function orderUpdatesOwed(db: Knex, limit: number): Promise<OwedOrderUpdate[]> {
  const checkout = liveSchema(checkoutProjection);
  const oms = liveSchema(omsProjection);
  return (
    db
      .from(`${checkout}.checkout_sessions as s`)
      // One status at a time per session, the earliest: the agent hears of the order's moves in their order.
      .distinctOn('s.id')
      .select('s.id', 's.tenant_id', 's.org_id', 's.order_id', 's.cart', 'a.webhook_url', 'h.status')
      .join(`${checkout}.agent_checkouts as a`, function () {
        this.on('a.tenant_id', 's.tenant_id').andOn('a.org_id', 's.org_id');
      })
      .join(`${oms}.order_status_history as h`, 'h.order_id', 's.order_id')
      .leftJoin(`${checkout}.order_update_notices as n`, function () {
        this.on('n.session_id', 's.id').andOn('n.status', 'h.status');
      })
      .where('s.status', 'completed')
      .whereNotNull('s.notice')
      .whereNotNull('a.webhook_url')
      .where('h.outcome', 'applied')
      .whereNotIn('h.status', ['pending', 'confirmed', 'rejected'])
      .whereNull('n.session_id')
      .orderBy([{ column: 's.id' }, { column: 'h.offset' }])
      .limit(limit)
  );
}
