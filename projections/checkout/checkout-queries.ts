import type { Knex } from 'knex';
import type { Cart } from '../../commands/acp/checkout-cart.ts';
import type { CheckoutStatus } from '../../commands/acp/checkout-session.ts';
import { liveSchema } from '../../ledger/projection.ts';
import { checkoutProjection } from './checkout-projection.ts';

export type Scope = { tenantId: string; orgId: string };

const schema = liveSchema(checkoutProjection);

export type CheckoutSessionRow = {
  id: string;
  tenant_id: string;
  org_id: string;
  status: CheckoutStatus;
  currency: string;
  cart: Cart;
  subtotal: string;
  shipping_total: string;
  total: string;
  order_id: string | null;
  attempt: number;
  /** The stock the current completion asked to reserve ahead of its order (JSON of ReservationLine[]); null: none. */
  reservation?: string | null;
  last_failure: { order_id: string; reason: string; message: string } | null;
  created_at: Date;
  updated_at: Date;
};

/** The tenant's session; another tenant's is not found. */
export const findCheckoutSession = (db: Knex, { tenantId, orgId }: Scope, id: string): Promise<CheckoutSessionRow | undefined> =>
  db(`${schema}.checkout_sessions`).where({ tenant_id: tenantId, org_id: orgId, id }).first();

export const findAgentCheckout = (
  db: Knex,
  { tenantId, orgId }: Scope,
): Promise<{ webhook_url: string | null; ucp_order_webhook_url: string | null } | undefined> =>
  db(`${schema}.agent_checkouts`).where({ tenant_id: tenantId, org_id: orgId }).first('webhook_url', 'ucp_order_webhook_url');

/**
 * Sessions of every tenant whose completion started (or last moved) before `startedBefore` and has neither completed
 * nor failed since, oldest first: what the completion sweeper finishes or gives up.
 */
export const stalledCompletions = (db: Knex, startedBefore: Date, limit: number): Promise<CheckoutSessionRow[]> =>
  db(`${schema}.checkout_sessions`)
    .where({ status: 'complete_in_progress' })
    .where('updated_at', '<', startedBefore)
    .orderBy([{ column: 'updated_at' }, { column: 'id' }])
    .limit(limit);
