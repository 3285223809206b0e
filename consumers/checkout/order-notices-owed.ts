import type { Knex } from 'knex';
import type { Cart } from '../../commands/acp/checkout-cart.ts';
import type { OrderMove } from '../../commands/acp/ucp-order.ts';
import { liveSchema } from '../../ledger/projection.ts';
import { checkoutProjection } from '../../projections/checkout/checkout-projection.ts';
import type { CheckoutSessionRow } from '../../projections/checkout/checkout-queries.ts';
import { omsProjection } from '../../projections/oms/oms-projection.ts';

/**
 * The order events the checkout notifier owes, read from the checkout and order read models. Each names the protocol
 * that placed the order (`platform`: `acp` or `ucp`) and the webhook of that protocol's platform: a session's events go
 * to the platform that completed it, in its protocol's shape.
 */
export type Protocol = 'acp' | 'ucp';

export type OwedOrderNotice = CheckoutSessionRow & { platform: Protocol; webhook_url: string; order_created_at: Date };

export type OwedOrderUpdate = {
  id: string;
  tenant_id: string;
  org_id: string;
  order_id: string;
  cart: Cart;
  platform: Protocol;
  webhook_url: string;
  status: string;
  /** The order history's position and time of this status. */
  offset: string;
  at: Date;
};

const checkout = () => liveSchema(checkoutProjection);
const oms = () => liveSchema(omsProjection);

/** The tenant's webhook for the protocol that placed the order. */
const WEBHOOK_OF_PLATFORM = `case when o.platform = 'ucp' then a.ucp_order_webhook_url else a.webhook_url end`;

/** Joins the session's tenant settings and order, keeping the sessions whose protocol's platform has a webhook. */
const withWebhook = (query: Knex.QueryBuilder) =>
  query
    .join(`${checkout()}.agent_checkouts as a`, function () {
      this.on('a.tenant_id', 's.tenant_id').andOn('a.org_id', 's.org_id');
    })
    .join(`${oms()}.orders as o`, 'o.id', 's.order_id')
    .whereRaw(`${WEBHOOK_OF_PLATFORM} is not null`);

/** Whether any checkout session is completed: without one, no order event is owed to any platform. */
export async function anyCompletedSession(db: Knex): Promise<boolean> {
  const { rows } = (await db.raw(`select exists (select 1 from ??.checkout_sessions where status = 'completed') as any`, [checkout()])) as {
    rows: { any: boolean }[];
  };
  return rows[0]?.any ?? false;
}

/** Completed sessions whose order_create notice has no recorded outcome, for tenants with a webhook for their protocol. */
export const orderNoticesOwed = (db: Knex, limit: number): Promise<OwedOrderNotice[]> =>
  withWebhook(
    db
      .select('s.*', 'o.platform', 'o.created_at as order_created_at', db.raw(`${WEBHOOK_OF_PLATFORM} as webhook_url`))
      .from(`${checkout()}.checkout_sessions as s`),
  )
    .where('s.status', 'completed')
    .whereNull('s.notice')
    .orderBy('s.updated_at')
    .limit(limit);

/**
 * Status changes of completed sessions' orders (the order read model's applied history after confirmation) that have
 * no recorded order_update notice, once the session's order_create has gone: the platform hears of the order first.
 */
export const orderUpdatesOwed = (db: Knex, limit: number): Promise<OwedOrderUpdate[]> =>
  withWebhook(
    db
      .from(`${checkout()}.checkout_sessions as s`)
      // One status at a time per session, the earliest: the platform hears of the order's moves in their order.
      .distinctOn('s.id')
      .select('s.id', 's.tenant_id', 's.org_id', 's.order_id', 's.cart', 'o.platform', 'h.status', 'h.offset', 'h.at')
      .select(db.raw(`${WEBHOOK_OF_PLATFORM} as webhook_url`)),
  )
    .join(`${oms()}.order_status_history as h`, 'h.order_id', 's.order_id')
    .leftJoin(`${checkout()}.order_update_notices as n`, function () {
      this.on('n.session_id', 's.id').andOn('n.status', 'h.status');
    })
    .where('s.status', 'completed')
    .whereNotNull('s.notice')
    .where('h.outcome', 'applied')
    .whereNotIn('h.status', ['pending', 'confirmed', 'rejected'])
    .whereNull('n.session_id')
    .orderBy([{ column: 's.id' }, { column: 'h.offset' }])
    .limit(limit);

/** The order's applied status changes after its confirmation, up to the one at `offset`: what a UCP order shows by then. */
export const orderMovesUpTo = (db: Knex, orderId: string, offset: string): Promise<OrderMove[]> =>
  db(`${oms()}.order_status_history`)
    .select('status', 'at')
    .where({ order_id: orderId, outcome: 'applied' })
    .whereNotIn('status', ['pending', 'confirmed', 'rejected'])
    .where('offset', '<=', offset)
    .orderBy('offset');
