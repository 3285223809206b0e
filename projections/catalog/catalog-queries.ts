import type { Knex } from 'knex';
import { liveSchema } from '../../ledger/projection.ts';
import { batchedLookup } from '../batched-lookup.ts';
import { rowCount } from '../row-count.ts';
import { catalogProjection } from './catalog-projection.ts';

export type Scope = { tenantId: string; orgId: string };

const schema = liveSchema(catalogProjection);
const products = (db: Knex) => db(`${schema}.products`);
const variants = (db: Knex) => db(`${schema}.variants`);

export type ProductRow = {
  id: string;
  tenant_id: string;
  org_id: string;
  title: string;
  description: string | null;
  category: string | null;
  sku: string | null;
  brand: string | null;
  template_id: string | null;
  attributes: Record<string, string>;
  status: string;
  quality_score: number | null;
  created_at: Date;
  updated_at: Date;
};

export type VariantRow = {
  id: string;
  product_id: string;
  sku: string | null;
  barcode: string | null;
  price: string | null;
  currency: string | null;
  created_at: Date;
};

const scoped = (query: Knex.QueryBuilder, { tenantId, orgId }: Scope) => query.where({ tenant_id: tenantId, org_id: orgId });

/** A page of products, newest first; ties on created_at are broken by id, so pages neither overlap nor skip. */
export const listProducts = (
  db: Knex,
  scope: Scope,
  { limit = 100, offset = 0 }: { limit?: number; offset?: number } = {},
): Promise<ProductRow[]> =>
  scoped(products(db), scope)
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }])
    .limit(limit)
    .offset(offset);

/** Reads asked together (a notice's writes reading back what they wrote) are one statement. */
export const findProduct = batchedLookup<ProductRow>((db, ids) => products(db).whereIn('id', ids));

export const listVariants = (db: Knex, scope: Scope, productId: string): Promise<VariantRow[]> =>
  scoped(variants(db), scope)
    .where({ product_id: productId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select('id', 'product_id', 'sku', 'barcode', 'price', 'currency', 'created_at');

export const findVariant = (db: Knex, scope: Scope, id: string): Promise<VariantRow | undefined> =>
  scoped(variants(db), scope).where({ id }).first('id', 'product_id', 'sku', 'barcode', 'price', 'currency', 'created_at');

export async function catalogCounts(db: Knex, scope: Scope) {
  return {
    total_products: await rowCount(scoped(products(db), scope)),
    active_products: await rowCount(scoped(products(db), scope).where({ status: 'ACTIVE' })),
    total_variants: await rowCount(scoped(variants(db), scope)),
  };
}
