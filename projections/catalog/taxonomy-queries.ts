import type { Knex } from 'knex';
import { liveSchema } from '../../ledger/projection.ts';
import { rowCount } from '../row-count.ts';
import { catalogProjection } from './catalog-projection.ts';
import type { Scope } from './catalog-queries.ts';

const schema = liveSchema(catalogProjection);

type Owned = {
  id: string;
  tenant_id: string;
  org_id: string;
  name: string;
  description: string | null;
  created_at: Date;
  updated_at: Date;
};
export type CategoryRow = Owned & { slug: string; parent_id: string | null };
export type BrandRow = Owned & { logo_url: string | null };
export type AttributeRow = Owned & { slug: string; type: string; options: string[] };
export type AttributeGroupRow = Owned & { attribute_ids: string[] };
export type TemplateRow = Owned & { category_id: string | null; attribute_group_ids: string[]; required_attribute_ids: string[] };

type Tables = {
  categories: CategoryRow;
  brands: BrandRow;
  attributes: AttributeRow;
  attribute_groups: AttributeGroupRow;
  templates: TemplateRow;
};

/** Listed in creation order (oldest first), at most `limit`. */
export const listOwned = <T extends keyof Tables>(db: Knex, tableName: T, { tenantId, orgId }: Scope, limit = 1000): Promise<Tables[T][]> =>
  db(`${schema}.${tableName}`)
    .where({ tenant_id: tenantId, org_id: orgId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .limit(limit);

export const findOwned = <T extends keyof Tables>(
  db: Knex,
  tableName: T,
  { tenantId, orgId }: Scope,
  id: string,
): Promise<Tables[T] | undefined> => db(`${schema}.${tableName}`).where({ tenant_id: tenantId, org_id: orgId, id }).first();

export const countOwned = (db: Knex, tableName: keyof Tables, { tenantId, orgId }: Scope): Promise<number> =>
  rowCount(db(`${schema}.${tableName}`).where({ tenant_id: tenantId, org_id: orgId }));

export type MediaRow = {
  id: string;
  tenant_id: string;
  org_id: string;
  product_id: string;
  variant_id: string | null;
  url: string;
  alt_text: string | null;
  sort_order: number;
  created_at: Date;
  updated_at: Date;
};

const media = (db: Knex, { tenantId, orgId }: Scope) => db(`${schema}.media`).where({ tenant_id: tenantId, org_id: orgId });

/** Lower sort_order first, then creation order; at most `limit`. */
export const listMedia = (
  db: Knex,
  scope: Scope,
  filter: { productId?: string; variantId?: string },
  limit = 1000,
): Promise<MediaRow[]> => {
  const query = media(db, scope);
  if (filter.productId) query.where({ product_id: filter.productId });
  if (filter.variantId) query.where({ variant_id: filter.variantId });
  return query.orderBy([{ column: 'sort_order' }, { column: 'created_at' }, { column: 'id' }]).limit(limit);
};

export const findMedia = (db: Knex, scope: Scope, id: string): Promise<MediaRow | undefined> => media(db, scope).where({ id }).first();
