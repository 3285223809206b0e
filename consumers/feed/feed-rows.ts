import type { Knex } from 'knex';
import { liveSchema } from '../../ledger/projection.ts';
import { catalogProjection } from '../../projections/catalog/catalog-projection.ts';
import type { Scope } from '../../projections/catalog/catalog-queries.ts';
import { omsProjection } from '../../projections/oms/oms-projection.ts';
import { blockedProducts } from '../../projections/validation/validation-queries.ts';
import type { FeedProduct, FeedVariant } from '../../commands/ucp/feed-product.ts';

const catalog = liveSchema(catalogProjection);
const oms = liveSchema(omsProjection);

type ProductRow = Pick<FeedProduct, 'id' | 'title' | 'description' | 'sku' | 'brand' | 'category' | 'status'>;
type VariantRow = Omit<FeedVariant, 'available'> & { product_id: string };

const groupBy = <T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> => {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const list = groups.get(key(row));
    if (list) list.push(row);
    else groups.set(key(row), [row]);
  }
  return groups;
};

/**
 * The tenant and org's products as the feed needs them, `pageSize` at a time in id order (keyset paging: a page costs
 * the same wherever it is, and the catalog is never held whole). `trx` should be one repeatable-read transaction, so
 * every page and every table reads the same moment of the read models.
 */
export async function* feedProducts(trx: Knex, scope: Scope, pageSize = 1_000): AsyncGenerator<FeedProduct> {
  const failing = await blockedProducts(trx, scope);
  let after: string | null = null;
  for (;;) {
    // Only ACTIVE products can be listed (`isListed`): a catalog of drafts (an import not yet released) is read as empty.
    const query = trx(`${catalog}.products`)
      .where({ tenant_id: scope.tenantId, org_id: scope.orgId, status: 'ACTIVE' })
      .orderBy('id')
      .limit(pageSize)
      .select('id', 'title', 'description', 'sku', 'brand', 'category', 'status');
    if (after !== null) query.where('id', '>', after);
    const products = (await query) as ProductRow[];
    if (products.length === 0) return;
    const ids = products.map((p) => p.id);
    // One after another: they share the transaction's one connection.
    const variants = (await trx(`${catalog}.variants`)
      .whereIn('product_id', ids)
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select('id', 'product_id', 'sku', 'barcode', 'price', 'currency')) as VariantRow[];
    const media = (await trx(`${catalog}.media`)
      .whereIn('product_id', ids)
      .orderBy([{ column: 'sort_order' }, { column: 'created_at' }, { column: 'id' }])
      .select('product_id', 'variant_id', 'url', 'alt_text')) as {
      product_id: string;
      variant_id: string | null;
      url: string;
      alt_text: string | null;
    }[];
    const variantIds = variants.map((v) => v.id);
    const levels = (await trx(`${oms}.stock_levels`)
      .where({ tenant_id: scope.tenantId, org_id: scope.orgId })
      .whereIn('variant_id', variantIds)
      .groupBy('variant_id')
      .select('variant_id', trx.raw('sum(greatest(available, 0))::bigint as available'))) as { variant_id: string; available: string }[];
    const variantsOf = groupBy(variants, (v) => v.product_id);
    const mediaOf = groupBy(media, (m) => m.product_id);
    const available = new Map(levels.map((l) => [l.variant_id, Number(l.available)]));
    for (const product of products) {
      yield {
        ...product,
        hasOpenError: failing.has(product.id),
        media: (mediaOf.get(product.id) ?? []).map((m) => ({ url: m.url, altText: m.alt_text, variantId: m.variant_id })),
        variants: (variantsOf.get(product.id) ?? []).map(({ product_id: _p, ...variant }) => ({
          ...variant,
          available: available.get(variant.id) ?? 0,
        })),
      };
    }
    if (products.length < pageSize) return;
    after = products[products.length - 1]?.id ?? null;
  }
}
