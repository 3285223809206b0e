import type { Knex } from 'knex';
import { liveSchema } from '../../ledger/projection.ts';
import { batchedLookup } from '../batched-lookup.ts';
import { rowCount } from '../row-count.ts';
import { omsProjection } from './oms-projection.ts';

export type Scope = { tenantId: string; orgId: string };

const schema = liveSchema(omsProjection);
const scoped = (db: Knex, table: string, { tenantId, orgId }: Scope) =>
  db(`${schema}.${table}`).where({ tenant_id: tenantId, org_id: orgId });

export type OrderLineRow = {
  name: string;
  quantity: number;
  unitPrice: string;
  lineTotal: string;
  variantId: string | null;
  locationId: string | null;
  sku: string | null;
  variantLabel: string | null;
  requiresShipment: boolean;
};

export type OrderRow = {
  id: string;
  tenant_id: string;
  org_id: string;
  status: string;
  idempotency_key: string;
  currency: string;
  customer_id: string | null;
  sales_channel: string | null;
  platform: string | null;
  payment_provider: string;
  payment_transaction_id: string;
  payment_status: string;
  subtotal: string;
  discount_total: string;
  shipping_total: string;
  tax_total: string;
  total: string;
  tags: string[];
  line_items: OrderLineRow[];
  rejection: { reason: string; message: string; line_index: number | null } | null;
  status_history: StatusHistoryRow[];
  created_at: Date;
  updated_at: Date;
};

/** `at` is the JSON text of a timestamptz. */
export type StatusHistoryRow = { status: string; requested_status: string | null; outcome: string; reason: string | null; at: string };

/** The order with its history in one statement, so both come from the same snapshot. */
const statusHistory = `coalesce((select json_agg(json_build_object('status', h.status, 'requested_status', h.requested_status, 'outcome', h.outcome, 'reason', h.reason, 'at', h.at) order by h.offset)
  from ??.order_status_history h where h.order_id = ??.id), '[]'::json) as status_history`;
const orders = (db: Knex, scope: Scope) =>
  scoped(db, 'orders', scope).select(`${schema}.orders.*`, db.raw(statusHistory, [schema, `${schema}.orders`]));

export const findOrder = (db: Knex, scope: Scope, id: string): Promise<OrderRow | undefined> => orders(db, scope).where({ id }).first();

/** Orders with whether a reservation row is theirs, by id, whoever's: asked together, read in one statement. */
const ordersReserved = batchedLookup<OrderRow & { reserved: boolean }>((db, ids) =>
  db(`${schema}.orders`)
    .select(
      `${schema}.orders.*`,
      db.raw(statusHistory, [schema, `${schema}.orders`]),
      // The reservation's row read in the same statement: one round trip, one snapshot.
      db.raw(`exists (select 1 from ??.stock_reservations r where r.order_id = ??.id) as reserved`, [schema, `${schema}.orders`]),
    )
    .whereIn('id', ids),
);

/**
 * The order once its outcome is in this read model: rejected, or confirmed (or later) with the
 * reservation of its inventory-backed lines applied to the stock levels too.
 */
export async function findDecidedOrder(db: Knex, scope: Scope, id: string): Promise<OrderRow | undefined> {
  const found = await ordersReserved(db, scope, id);
  if (!found || found.status === 'pending') return undefined;
  const { reserved, ...row } = found;
  if (row.status === 'rejected' || !row.line_items.some((line) => line.variantId)) return row;
  return reserved ? row : undefined;
}

/**
 * A reservation made ahead of its order (agentic checkout) once this read model has it: `held` (or `released`,
 * `shipped` later), or `refused`. The id is an order's, UUIDv5 of its tenant and org, so it names one tenant's.
 */
export const findReservationAhead = (
  db: Knex,
  orderId: string,
): Promise<{ status: 'held' | 'refused' | 'released' | 'shipped' } | undefined> =>
  db(`${schema}.stock_reservations`).where({ order_id: orderId }).first('status');

/** Newest first; pending orders (still being decided) are left out, so a page never shows an order that may yet be rejected. */
export async function listOrders(db: Knex, scope: Scope, limit: number, offset: number): Promise<{ rows: OrderRow[]; total: number }> {
  const rows: OrderRow[] = await orders(db, scope)
    .whereNot({ status: 'pending' })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }])
    .limit(limit)
    .offset(offset);
  return { rows, total: await rowCount(scoped(db, 'orders', scope).whereNot({ status: 'pending' })) };
}

export type LocationRow = { id: string; name: string; created_at: Date };
export type LevelRow = { variant_id: string; location_id: string; available: number; reserved: number; updated_at: Date };

export const listLocations = (db: Knex, scope: Scope): Promise<LocationRow[]> =>
  scoped(db, 'stock_locations', scope)
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select('id', 'name', 'created_at');

export const findLocation = (db: Knex, scope: Scope, id: string): Promise<LocationRow | undefined> =>
  scoped(db, 'stock_locations', scope).where({ id }).first('id', 'name', 'created_at');

export const listLevels = (db: Knex, scope: Scope, filter: { variant_id?: string; location_id?: string }): Promise<LevelRow[]> =>
  scoped(db, 'stock_levels', scope)
    .where(filter)
    .orderBy([{ column: 'variant_id' }, { column: 'location_id' }])
    .select('variant_id', 'location_id', 'available', 'reserved', 'updated_at');
