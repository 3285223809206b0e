import type { Knex } from 'knex';
import type { Cart, StockSeen } from '../../commands/acp/checkout-cart.ts';
import { listLevels } from '../oms/oms-queries.ts';
import type { Scope } from './checkout-queries.ts';

/**
 * The stock a checkout sees, from the oms read model, for the edge (pricing, splitting a completion over locations)
 * and the completion sweeper (the stock a given-up completion met) alike.
 */

/** The locations that hold the variant, most stocked first. */
export const availableAt = async (db: Knex, scope: Scope, variantId: string): Promise<{ locationId: string; available: number }[]> =>
  (await listLevels(db, scope, { variant_id: variantId }))
    .map((level) => ({ locationId: level.location_id, available: level.available }))
    .filter((level) => level.available > 0)
    .sort((a, b) => b.available - a.available || (a.locationId < b.locationId ? -1 : 1));

/** What each of the cart's items has available over every location now. */
export async function stockOf(db: Knex, scope: Scope, cart: Cart): Promise<StockSeen[]> {
  const stock: StockSeen[] = [];
  for (const line of cart.lines)
    stock.push({ itemId: line.itemId, available: (await availableAt(db, scope, line.itemId)).reduce((sum, l) => sum + l.available, 0) });
  return stock;
}
