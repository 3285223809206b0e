import type { RecordedEvent } from '../../ledger/message.ts';
import { mapperOf, type ProjectionContext } from '../../ledger/projection.ts';
import { getOrAdd } from '../get-or-add.ts';
import { write } from '../../ledger/held-writes.ts';
import { dollarQuoted, firstOfEachId, insertRows, tableIn, type Row } from '../record-set.ts';
import type { OmsEvent } from './oms-event.ts';
import { at, historyRow, orderMoves, placedOrder, reservationEffects, scope, type OrderMove } from './oms-rows.ts';

const moveOf = mapperOf(orderMoves);
const effectOf = mapperOf(reservationEffects);

/** A stock level after the batch's events: `absolute` once a StockAdjusted set its available units. */
type LevelFold = {
  row: {
    tenant_id: string;
    org_id: string;
    variant_id: string;
    location_id: string;
    available: number;
    reserved: number;
    updated_at: Date;
  };
  absolute: boolean;
};

/** An order's moves in the batch: all of them, and those after its placement in the batch (if it was placed in it). */
type OrderMoves = { all: (OrderMove & { at: Date })[]; placedAt?: number };

const lastOf = (moves: (OrderMove & { at: Date })[]) => {
  const last = moves[moves.length - 1];
  if (!last) return undefined;
  const changes = moves.reduce<OrderMove['changes']>((all, move) => ({ ...all, ...move.changes }), {});
  return { status: last.status, updated_at: last.at, payment_status: changes.payment_status ?? null, rejection: changes.rejection ?? null };
};

/**
 * The batch's orders in one statement that needs no answer: each order placed in the batch inserted as its moves after
 * the placement leave it, and the moves of orders that were there already (placed before the batch, or placed again
 * in it) applied to them. The insert is a data-modifying `with`, whose rows the update does not see, and the ids it
 * returns keep the update off the orders it inserted. An order moved in the batch before its placement keeps only the
 * moves after it, unless it was there already.
 */
function ordersStatement(table: string, placed: ReturnType<typeof placedOrder>[], moves: Map<string, OrderMoves>): string | undefined {
  const rows = placed.map((row) => {
    const own = moves.get(row.id.toLowerCase());
    const final = own && lastOf(own.all.slice(own.placedAt ?? 0));
    if (!final) return row;
    return {
      ...row,
      status: final.status,
      updated_at: final.updated_at,
      payment_status: final.payment_status ?? row.payment_status,
      ...(final.rejection ? { rejection: final.rejection } : {}),
    };
  });
  const updates = [...moves].flatMap(([id, { all }]) => {
    const final = lastOf(all);
    return final ? [{ id, ...final }] : [];
  });
  const insert =
    rows.length === 0
      ? undefined
      : `insert into ${table} select * from jsonb_populate_recordset(null::${table}, ${dollarQuoted(JSON.stringify(rows))}::jsonb)
         on conflict (id) do nothing`;
  if (updates.length === 0) return insert;
  const update = `update ${table} o set status = m.status, updated_at = m.updated_at,
      payment_status = coalesce(m.payment_status, o.payment_status), rejection = coalesce(m.rejection, o.rejection)
    from jsonb_to_recordset(${dollarQuoted(JSON.stringify(updates))}::jsonb)
      as m(id uuid, status text, updated_at timestamptz, payment_status text, rejection jsonb)
    where o.id = m.id`;
  return insert ? `with inserted as (${insert} returning id) ${update} and m.id not in (select id from inserted)` : update;
}

/**
 * What a batch of oms events does, folded in memory in log order without a read: one insert per table, orders' moves
 * as one update (a move before the order's placement in the batch only counts for an order that was there already), reservation statuses as one upsert of each's last, and stock levels as their net movement (a StockAdjusted
 * sets the available units, the moves after it add to them).
 */
export async function applyOmsBatch(events: RecordedEvent<OmsEvent>[], { sql, schema }: ProjectionContext): Promise<void> {
  const history: Row[] = [];
  const placed: ReturnType<typeof placedOrder>[] = [];
  const moves = new Map<string, OrderMoves>();
  const locations: (Row & { id: string })[] = [];
  const reservations = new Map<string, { order_id: string; status: string; updated_at: Date }>();
  const reservation = (orderId: string, status: string, event: RecordedEvent) =>
    reservations.set(orderId.toLowerCase(), { order_id: orderId, status, updated_at: at(event) });
  const levels = new Map<string, LevelFold>();
  const movesOf = (orderId: string) => getOrAdd(moves, orderId.toLowerCase(), () => ({ all: [] }));
  const level = (event: RecordedEvent, variantId: string, locationId: string) =>
    getOrAdd(levels, [event.envelope.tenantId, event.envelope.orgId, variantId, locationId].join('|').toLowerCase(), () => ({
      row: { ...scope(event), variant_id: variantId, location_id: locationId, available: 0, reserved: 0, updated_at: at(event) },
      absolute: false,
    }));

  for (const event of events) {
    switch (event.type) {
      case 'OrderPlaced': {
        placed.push(placedOrder(event));
        const orderMoves = movesOf(event.data.orderId);
        orderMoves.placedAt ??= orderMoves.all.length;
        history.push(historyRow(event, { status: 'pending', outcome: 'applied' }));
        break;
      }
      case 'OrderConfirmed':
      case 'OrderRejected':
      case 'OrderStatusChanged': {
        const move = moveOf(event);
        movesOf(event.envelope.aggregateId).all.push({ ...move, at: at(event) });
        history.push(historyRow(event, { status: move.status, outcome: 'applied' }));
        break;
      }
      case 'OrderStatusChangeRejected': {
        const { current, requested, reason } = event.data;
        history.push(historyRow(event, { status: current, requested_status: requested, outcome: 'rejected', reason }));
        break;
      }
      case 'OrderWithdrawn':
        // No order was placed: the stock it held ahead comes back with StockReleased, under its id.
        break;
      case 'StockLocationCreated':
        locations.push({ id: event.data.locationId, ...scope(event), name: event.data.name, created_at: at(event) });
        break;
      case 'StockAdjusted': {
        const fold = level(event, event.data.variantId, event.data.locationId);
        Object.assign(fold.row, { available: event.data.available, updated_at: at(event) });
        fold.absolute = true;
        break;
      }
      case 'StockReserved':
      case 'StockReleased':
      case 'StockShipped': {
        const { status, a, r } = effectOf(event);
        for (const line of event.data.lines) {
          const fold = level(event, line.variantId, line.locationId);
          Object.assign(fold.row, {
            available: fold.row.available + a * line.quantity,
            reserved: fold.row.reserved + r * line.quantity,
            updated_at: at(event),
          });
        }
        reservation(event.data.orderId, status, event);
        break;
      }
      case 'StockReservationRefused':
        // An order's refusal is its rejection; one ahead of an order is recorded here, as no order will say it.
        if (event.data.reservedAhead) reservation(event.data.orderId, 'refused', event);
        break;
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  }

  await insertRows(sql, schema, 'stock_locations', firstOfEachId(locations), 'on conflict (id) do nothing');
  const orders = ordersStatement(tableIn(schema, 'orders'), firstOfEachId(placed), moves);
  if (orders) await write(sql, orders);
  const entries = [...new Map(history.map((row) => [`${String(row.order_id).toLowerCase()}|${String(row.offset)}`, row])).values()];
  await insertRows(sql, schema, 'order_status_history', entries, 'on conflict (order_id, "offset") do nothing');
  await insertRows(
    sql,
    schema,
    'stock_reservations',
    [...reservations.values()],
    'on conflict (order_id) do update set status = excluded.status, updated_at = excluded.updated_at',
  );
  const key = 'on conflict (tenant_id, org_id, variant_id, location_id) do update set';
  const moved = 'reserved = stock_levels.reserved + excluded.reserved, updated_at = excluded.updated_at';
  const folds = [...levels.values()];
  await insertRows(
    sql,
    schema,
    'stock_levels',
    folds.filter((f) => f.absolute).map((f) => f.row),
    `${key} available = excluded.available, ${moved}`,
  );
  await insertRows(
    sql,
    schema,
    'stock_levels',
    folds.filter((f) => !f.absolute).map((f) => f.row),
    `${key} available = stock_levels.available + excluded.available, ${moved}`,
  );
}
