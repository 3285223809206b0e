import type { Knex } from 'knex';
import { liveSchema } from '../../ledger/projection.ts';
import { catalogProjection } from '../../projections/catalog/catalog-projection.ts';
import { REFERENCE_SLUG, type CommerceItem } from './provider.ts';

/** How a pushed item names its product on the platform: searchable, unique, and stable across retries and restarts. */
export const productReference = (productId: string): string => `cl:${productId}`;

type ProductRow = {
  id: string;
  title: string;
  description: string | null;
  category: string | null;
  sku: string | null;
  brand: string | null;
  status: string;
};
type VariantRow = { product_id: string; sku: string | null; price: string | null; currency: string | null };
type MediaRow = { product_id: string; url: string; alt_text: string | null };

/** The platform's view of a product: its title, text, brand, category as a tag, media in order, and its variants' prices. */
export function commerceItemOf(product: ProductRow, variants: VariantRow[], media: MediaRow[]): CommerceItem {
  const variantList = variants.map(({ sku, price, currency }) => ({
    sku,
    prices: price === null ? [] : [{ price: Number(price), currency }],
  }));
  return {
    name: product.title,
    description: product.description,
    is_active: product.status === 'ACTIVE',
    vendor_name: product.brand,
    tags: product.category ? [product.category] : [],
    metadata: [{ slug: REFERENCE_SLUG, value: productReference(product.id) }],
    media: media.map(({ url, alt_text }, position) => ({ url, alt: alt_text, position })),
    // The platform's first variant is the default one: a product without variants is one, with the product's SKU.
    variants: variantList.length > 0 ? variantList : [{ sku: product.sku, prices: [] }],
  };
}

/** The items of these products as the catalog read model has them now (a deleted product has none). */
export async function loadCommerceItems(db: Knex, productIds: string[]): Promise<Map<string, CommerceItem>> {
  const schema = liveSchema(catalogProjection);
  if (productIds.length === 0) return new Map();
  const [products, variants, media] = await Promise.all([
    db(`${schema}.products`)
      .whereIn('id', productIds)
      .select('id', 'title', 'description', 'category', 'sku', 'brand', 'status') as Promise<ProductRow[]>,
    db(`${schema}.variants`)
      .whereIn('product_id', productIds)
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select('product_id', 'sku', 'price', 'currency') as Promise<VariantRow[]>,
    db(`${schema}.media`)
      .whereIn('product_id', productIds)
      .orderBy([{ column: 'sort_order' }, { column: 'id' }])
      .select('product_id', 'url', 'alt_text') as Promise<MediaRow[]>,
  ]);
  const of = <R extends { product_id: string }>(rows: R[], id: string) => rows.filter((r) => r.product_id === id);
  return new Map(products.map((p) => [p.id, commerceItemOf(p, of(variants, p.id), of(media, p.id))]));
}
