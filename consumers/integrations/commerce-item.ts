import type { Knex } from 'knex';
import { DEFAULT_VARIANT } from '../../commands/integrations/item-push.ts';
import { liveSchema } from '../../ledger/projection.ts';
import { catalogProjection } from '../../projections/catalog/catalog-projection.ts';
import { REFERENCE_SLUG, type CommerceItem, type CommerceItemVariant, type ItemPrice } from '../../adapters/provider/provider.ts';

/** How a pushed item names its product on the platform: searchable, unique, and stable across retries and restarts. */
export const productReference = (productId: string): string => `cl:${productId}`;
/** How a pushed itemvariant names its variant (or the product's default one): the product's reference, then the variant. */
export const variantReference = (productId: string, variantId: string): string => `${productReference(productId)}/${variantId}`;

/** A variant as it goes to the platform: ours (or DEFAULT_VARIANT), and its body less the item it belongs to. */
export type PlatformVariant = { variantId: string; body: CommerceItemVariant };
/** A product as the platform takes it: the item, and its variants as itemvariants of their own. */
export type PlatformProduct = { item: CommerceItem; variants: PlatformVariant[] };

type ProductRow = {
  id: string;
  title: string;
  description: string | null;
  category: string | null;
  sku: string | null;
  brand: string | null;
  status: string;
};
type VariantRow = { id: string; product_id: string; sku: string | null; price: string | null; currency: string | null };
type MediaRow = { product_id: string; url: string; alt_text: string | null };

const pricesOf = ({ price, currency }: Pick<VariantRow, 'price' | 'currency'>): ItemPrice[] =>
  price === null ? [] : [{ price: Number(price), ...(currency === null ? {} : { currency }) }];

const present = <K extends string, V>(key: K, value: V | null): { [P in K]?: V } =>
  (value === null ? {} : { [key]: value }) as { [P in K]?: V };

/**
 * The platform's view of a product: its title, text, brand, category as a tag, media in order, and as its prices the
 * first priced variant's (the platform's default variant); each variant an itemvariant with its SKU and price. A product
 * without variants but with a SKU goes as one default itemvariant carrying that SKU, so order lines can name it.
 */
export function platformProductOf(product: ProductRow, variants: VariantRow[], media: MediaRow[]): PlatformProduct {
  const active = product.status === 'ACTIVE';
  const firstPriced = variants.find((v) => v.price !== null);
  const item: CommerceItem = {
    name: product.title,
    ...present('description', product.description),
    is_active: active,
    ...present('vendor_name', product.brand),
    tags: product.category ? [product.category] : [],
    metadata: [{ slug: REFERENCE_SLUG, value: productReference(product.id) }],
    media: media.map(({ url, alt_text }, position) => ({ url, ...present('alt', alt_text), position })),
    prices: firstPriced ? pricesOf(firstPriced) : [],
  };
  const variant = (variantId: string, sku: string | null, prices: ItemPrice[]): PlatformVariant => ({
    variantId,
    body: {
      name: sku ?? product.title,
      ...present('sku', sku),
      is_active: active,
      metadata: [{ slug: REFERENCE_SLUG, value: variantReference(product.id, variantId) }],
      prices,
    },
  });
  const platformVariants =
    variants.length > 0
      ? variants.map((v) => variant(v.id, v.sku, pricesOf(v)))
      : product.sku === null
        ? []
        : [variant(DEFAULT_VARIANT, product.sku, [])];
  return { item, variants: platformVariants };
}

/** The platform products of these products as the catalog read model has them now (a deleted product has none). */
export async function loadPlatformProducts(db: Knex, productIds: string[]): Promise<Map<string, PlatformProduct>> {
  const schema = liveSchema(catalogProjection);
  if (productIds.length === 0) return new Map();
  const [products, variants, media] = await Promise.all([
    db(`${schema}.products`)
      .whereIn('id', productIds)
      .select('id', 'title', 'description', 'category', 'sku', 'brand', 'status') as Promise<ProductRow[]>,
    db(`${schema}.variants`)
      .whereIn('product_id', productIds)
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select('id', 'product_id', 'sku', 'price', 'currency') as Promise<VariantRow[]>,
    db(`${schema}.media`)
      .whereIn('product_id', productIds)
      .orderBy([{ column: 'sort_order' }, { column: 'id' }])
      .select('product_id', 'url', 'alt_text') as Promise<MediaRow[]>,
  ]);
  const of = <R extends { product_id: string }>(rows: R[], id: string) => rows.filter((r) => r.product_id === id);
  return new Map(products.map((p) => [p.id, platformProductOf(p, of(variants, p.id), of(media, p.id))]));
}
