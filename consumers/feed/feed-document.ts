import { createHash } from 'node:crypto';
import { productUrl, type CatalogFeedSettings } from '../../commands/ucp/catalog-feed.ts';
import { isValidGtin } from '../../commands/quality/gtin.ts';

/**
 * The catalog feed's two files, built product by product (docs/decisions.md "Catalog feed"): a schema.org JSON-LD
 * `ItemList` of `Product`s with an `Offer` per variant, and the agentic-commerce product feed as JSON lines, one line
 * per variant. Pure: the same products and settings give the same bytes, so the same content hash and the same keys.
 */
export type FeedVariant = {
  id: string;
  sku: string | null;
  barcode: string | null;
  /** The exact decimal text as stored. */
  price: string | null;
  currency: string | null;
  /** Available units summed over every location (rm_oms.stock_levels); 0 when it has no level. */
  available: number;
};

export type FeedProduct = {
  id: string;
  title: string;
  description: string | null;
  sku: string | null;
  brand: string | null;
  category: string | null;
  /** ACTIVE or DRAFT. */
  status: string;
  /** Whether the product has an open validation issue of severity ERROR. */
  hasOpenError: boolean;
  /** Media URLs in sort order. */
  images: string[];
  /** In creation order. */
  variants: FeedVariant[];
};

/** Only products that pass quality are offered: ACTIVE and without an open ERROR issue. */
export const isListed = (product: FeedProduct): boolean => product.status === 'ACTIVE' && !product.hasOpenError;

type GtinProperty = 'gtin8' | 'gtin12' | 'gtin13' | 'gtin14';
export type Gtins = Partial<Record<GtinProperty, string>>;

/** The schema.org property a barcode fills: by its length, and only when it is a valid GTIN (check digit included). */
export const gtinOf = (barcode: string | null): Gtins =>
  barcode !== null && isValidGtin(barcode) ? { [`gtin${barcode.length}`]: barcode } : {};

/** The product's own GTINs: per length, the first variant (in creation order) whose barcode is a valid GTIN of it. */
export const productGtins = (variants: readonly FeedVariant[]): Gtins =>
  variants.reduceRight<Gtins>((gtins, variant) => ({ ...gtins, ...gtinOf(variant.barcode) }), {});

const IN_STOCK = 'https://schema.org/InStock';
const OUT_OF_STOCK = 'https://schema.org/OutOfStock';

/** A variant is offered only with a price and a currency. */
const offered = (variant: FeedVariant): variant is FeedVariant & { price: string; currency: string } =>
  variant.price !== null && variant.currency !== null;

const present = <T extends Record<string, unknown>>(record: T): Partial<T> =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null && value !== undefined && value !== '')) as Partial<T>;

const urlOf = (product: FeedProduct, settings: CatalogFeedSettings | null): string | undefined =>
  settings
    ? productUrl(settings.productUrlTemplate, { id: product.id, sku: product.sku ?? product.variants.find((v) => v.sku)?.sku ?? null })
    : undefined;

/** The JSON-LD `Product` of a listed product. */
export function jsonLdProduct(product: FeedProduct, settings: CatalogFeedSettings | null): Record<string, unknown> {
  const url = urlOf(product, settings);
  const seller = settings ? { '@type': 'Organization', name: settings.sellerName } : undefined;
  const offers = product.variants.filter(offered).map((variant) =>
    present({
      '@type': 'Offer',
      sku: variant.sku,
      ...gtinOf(variant.barcode),
      price: variant.price,
      priceCurrency: variant.currency,
      availability: variant.available > 0 ? IN_STOCK : OUT_OF_STOCK,
      url,
      seller,
    }),
  );
  return present({
    '@type': 'Product',
    productID: product.id,
    name: product.title,
    description: product.description,
    sku: product.sku,
    ...productGtins(product.variants),
    brand: product.brand === null ? null : { '@type': 'Brand', name: product.brand },
    category: product.category,
    image: product.images.length > 0 ? product.images : null,
    url,
    offers: offers.length > 0 ? offers : null,
  });
}

/** The agentic-commerce product feed's lines of a listed product: one per offered variant. */
export function productFeedLines(product: FeedProduct, settings: CatalogFeedSettings | null): Record<string, unknown>[] {
  const url = urlOf(product, settings) ?? null;
  const [imageUrl = null, ...more] = product.images;
  // Its required fields; a line without them is still listed, but not for search.
  const searchable = Boolean(product.description && url && product.brand && imageUrl && settings);
  return product.variants.filter(offered).map((variant) => {
    const { gtin8, gtin12, gtin13, gtin14 } = gtinOf(variant.barcode);
    return present({
      item_id: variant.id,
      item_group_id: product.id,
      item_group_title: product.title,
      title: product.title,
      description: product.description,
      url,
      brand: product.brand,
      product_category: product.category,
      image_url: imageUrl,
      additional_image_urls: more.length > 0 ? more.join(',') : null,
      gtin: gtin14 ?? gtin13 ?? gtin12 ?? gtin8,
      mpn: variant.sku,
      price: `${variant.price} ${variant.currency}`,
      availability: variant.available > 0 ? 'in_stock' : 'out_of_stock',
      inventory_quantity: Math.max(0, variant.available),
      seller_name: settings?.sellerName,
      is_eligible_search: searchable,
      // No checkout integration yet (it needs the seller's policies and the checkout API).
      is_eligible_checkout: false,
    });
  });
}

export type BuiltFeed = {
  jsonLd: Buffer;
  jsonl: Buffer;
  jsonLdHash: string;
  jsonlHash: string;
  /** Over both files: what the feed aggregate compares. */
  contentHash: string;
  productCount: number;
  itemCount: number;
};

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/**
 * Both files, fed products in a stable order (the reader's: by id). The bytes are held until `finish`, because the
 * keys are the contents' hashes and must be known before anything is written.
 */
export class FeedBuilder {
  private readonly jsonLd: Buffer[] = [];
  private readonly jsonl: Buffer[] = [];
  private readonly jsonLdHash = createHash('sha256');
  private readonly jsonlHash = createHash('sha256');
  private productCount = 0;
  private itemCount = 0;

  constructor(private readonly settings: CatalogFeedSettings | null) {
    const head = { '@context': 'https://schema.org', '@type': 'ItemList', itemListOrder: 'https://schema.org/ItemListUnordered' };
    this.writeJsonLd(`${JSON.stringify(head).slice(0, -1)},"itemListElement":[`);
  }

  add(product: FeedProduct): void {
    if (!isListed(product)) return;
    const item = { '@type': 'ListItem', position: this.productCount + 1, item: jsonLdProduct(product, this.settings) };
    this.writeJsonLd(`${this.productCount > 0 ? ',' : ''}${JSON.stringify(item)}`);
    this.productCount += 1;
    const lines = productFeedLines(product, this.settings);
    if (lines.length === 0) return;
    const text = `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
    const bytes = Buffer.from(text, 'utf8');
    this.jsonl.push(bytes);
    this.jsonlHash.update(bytes);
    this.itemCount += lines.length;
  }

  finish(): BuiltFeed {
    this.writeJsonLd(`],"numberOfItems":${this.productCount}}`);
    const jsonLdHash = this.jsonLdHash.digest('hex');
    const jsonlHash = this.jsonlHash.digest('hex');
    return {
      jsonLd: Buffer.concat(this.jsonLd),
      jsonl: Buffer.concat(this.jsonl),
      jsonLdHash,
      jsonlHash,
      contentHash: sha256(`${jsonLdHash}\n${jsonlHash}`),
      productCount: this.productCount,
      itemCount: this.itemCount,
    };
  }

  private writeJsonLd(text: string): void {
    const bytes = Buffer.from(text, 'utf8');
    this.jsonLd.push(bytes);
    this.jsonLdHash.update(bytes);
  }
}

/** The content-addressed keys of a built feed: a file under a key never changes, so it may be cached forever. */
export const feedKeys = (tenantId: string, orgId: string, feed: Pick<BuiltFeed, 'jsonLdHash' | 'jsonlHash'>) => ({
  jsonLdKey: `feeds/${tenantId}/${orgId}/${feed.jsonLdHash}.jsonld`,
  jsonlKey: `feeds/${tenantId}/${orgId}/${feed.jsonlHash}.jsonl`,
});
