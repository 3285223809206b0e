import type { Knex } from 'knex';
import { liveSchema } from '../../ledger/projection.ts';
import { catalogProjection } from '../../projections/catalog/catalog-projection.ts';
import { connectionsProjection } from '../../projections/integrations/connections-projection.ts';
import { pushProjection } from '../../projections/integrations/push-projection.ts';
import { omsProjection } from '../../projections/oms/oms-projection.ts';
import type { LineMatch, PlatformLine } from '../../commands/oms/order-mapping.ts';

/** What the order mapping reads from the read models (its decisions stay with the order aggregate). */

type Scope = { tenantId: string; orgId: string };

export type MappingConnection = { provider: string; default_location_id: string | null; unified_connection_id: string };

export const mappingConnection = (db: Knex, connectionId: string): Promise<MappingConnection | undefined> =>
  db(`${liveSchema(connectionsProjection)}.connections`)
    .where({ id: connectionId })
    .first('provider', 'default_location_id', 'unified_connection_id');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Each line's variant: by its platform variant id, an itemvariant we pushed to this connection (the push read model's
 * remote variants); else by `item_id`, the platform's id of an item we pushed (its remote id), then that product's first
 * variant; else by `sku` among the org's variants (the oldest with that SKU).
 */
export async function matchLines(db: Knex, { tenantId, orgId }: Scope, connectionId: string, lines: PlatformLine[]): Promise<LineMatch[]> {
  const catalog = liveSchema(catalogProjection);
  const push = liveSchema(pushProjection);
  const distinct = (of: (line: PlatformLine) => string | null) => [...new Set(lines.flatMap((l) => of(l) ?? []))];
  const pushed = UUID.test(connectionId);
  const [byVariant, byItem, bySku] = await Promise.all([
    keyed(
      db,
      distinct((l) => l.variantId),
      pushed,
      (ids) => [
        `select rv."remoteId" as key, v.id as variant_id, v.sku
         from ??.items i
         cross join lateral jsonb_to_recordset(i.remote_variants) as rv("variantId" text, "remoteId" text)
         join ??.variants v on v.id::text = rv."variantId" and v.product_id = i.product_id and v.tenant_id = ? and v.org_id = ?
        where i.connection_id = ? and i.tenant_id = ? and i.org_id = ? and rv."remoteId" = any(?)`,
        [push, catalog, tenantId, orgId, connectionId, tenantId, orgId, ids],
      ],
    ),
    keyed(
      db,
      distinct((l) => l.itemId),
      pushed,
      (ids) => [
        `select i.remote_id as key, v.id as variant_id, v.sku
         from ??.items i
         join lateral (select id, sku from ??.variants v
                        where v.product_id = i.product_id and v.tenant_id = ? and v.org_id = ?
                        order by v.created_at, v.id limit 1) v on true
        where i.connection_id = ? and i.tenant_id = ? and i.org_id = ? and i.remote_id = any(?)`,
        [push, catalog, tenantId, orgId, connectionId, tenantId, orgId, ids],
      ],
    ),
    keyed(
      db,
      distinct((l) => l.sku),
      true,
      (skus) => [
        `select distinct on (sku) sku as key, id as variant_id, sku from ??.variants
        where tenant_id = ? and org_id = ? and sku = any(?) order by sku, created_at, id`,
        [catalog, tenantId, orgId, skus],
      ],
    ),
  ]);
  return lines.map((line) => {
    const found =
      (line.variantId !== null ? byVariant.get(line.variantId) : undefined) ??
      (line.itemId !== null ? byItem.get(line.itemId) : undefined) ??
      (line.sku !== null ? bySku.get(line.sku) : undefined);
    return found ? { variantId: found.variant_id, sku: found.sku } : null;
  });
}

type Match = { variant_id: string; sku: string | null };

/** The matches a statement finds for `keys`, by key (none asked for when there are no keys or `applies` is false). */
async function keyed(
  db: Knex,
  keys: string[],
  applies: boolean,
  statement: (keys: string[]) => [string, Knex.RawBinding[]],
): Promise<Map<string, Match>> {
  if (keys.length === 0 || !applies) return new Map();
  const { rows } = await db.raw<{ rows: (Match & { key: string })[] }>(...statement(keys));
  return new Map(rows.map((row) => [row.key, row]));
}

/** The order's status as the read model shows it (undefined before it is there). */
export const orderStatusOf = async (db: Knex, { tenantId, orgId }: Scope, orderId: string): Promise<string | undefined> =>
  (
    (await db(`${liveSchema(omsProjection)}.orders`)
      .where({ id: orderId, tenant_id: tenantId, org_id: orgId })
      .first('status')) as { status: string } | undefined
  )?.status;
