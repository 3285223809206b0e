import { isValidGtin } from '../quality/gtin.ts';
import { productUrl, type CatalogFeedSettings } from './feed-settings.ts';

/** A product as both feed files show it, and the rules they share (docs/decisions.md "Catalog feed"). */
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

/** `variantId`: the variant the medium shows, null when it shows the product. */
export type FeedMedia = { url: string; altText: string | null; variantId: string | null };

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
  /** In sort order. */
  media: FeedMedia[];
  /** In creation order. */
  variants: FeedVariant[];
};

export type OfferedVariant = FeedVariant & { price: string; currency: string };

/** Only products that pass quality are offered: ACTIVE and without an open ERROR issue. */
export const isListed = (product: FeedProduct): boolean => product.status === 'ACTIVE' && !product.hasOpenError;

/** A variant is offered only with a price and a currency. */
export const offeredVariants = (product: FeedProduct): OfferedVariant[] =>
  product.variants.filter((variant): variant is OfferedVariant => variant.price !== null && variant.currency !== null);

type GtinProperty = 'gtin8' | 'gtin12' | 'gtin13' | 'gtin14';
export type Gtins = Partial<Record<GtinProperty, string>>;

/** The schema.org property a barcode fills: by its length, and only when it is a valid GTIN (check digit included). */
export const gtinOf = (barcode: string | null): Gtins =>
  barcode !== null && isValidGtin(barcode) ? { [`gtin${barcode.length}`]: barcode } : {};

/** The product's own GTINs: per length, the first variant (in creation order) whose barcode is a valid GTIN of it. */
export const productGtins = (variants: readonly FeedVariant[]): Gtins =>
  variants.reduceRight<Gtins>((gtins, variant) => ({ ...gtins, ...gtinOf(variant.barcode) }), {});

/** Without the entries that have no value: the files never carry null or an empty string. */
export const present = <T extends Record<string, unknown>>(record: T): Partial<T> =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null && value !== undefined && value !== '')) as Partial<T>;

/** `value` as a URL in its serialized form (spaces and the like percent-encoded), so it is a valid URI in every file. */
export const canonicalUrl = (value: string | null | undefined): string | undefined => {
  if (!value) return undefined;
  try {
    return new URL(value).href;
  } catch {
    return undefined;
  }
};

const productUrlOf = (product: FeedProduct, settings: CatalogFeedSettings | null): string | undefined =>
  settings
    ? canonicalUrl(
        productUrl(settings.productUrlTemplate, { id: product.id, sku: product.sku ?? product.variants.find((v) => v.sku)?.sku ?? null }),
      )
    : undefined;

/** What both files say alike of a listed product: its page, its variants on offer, their titles and media. */
export type Listing = {
  url: string | undefined;
  offered: OfferedVariant[];
  /** Media of the product as a whole (not of one variant). */
  ownMedia: FeedMedia[];
  mediaOf: (variant: FeedVariant) => FeedMedia[];
  titleOf: (variant: FeedVariant) => string;
};

export function listingOf(product: FeedProduct, settings: CatalogFeedSettings | null): Listing {
  const offered = offeredVariants(product);
  return {
    url: productUrlOf(product, settings),
    offered,
    ownMedia: product.media.filter((m) => m.variantId === null),
    mediaOf: (variant) => product.media.filter((m) => m.variantId === variant.id),
    // A variant has no name of its own: the product's, told apart from its siblings by the variant's SKU.
    titleOf: (variant) => (offered.length > 1 && variant.sku ? `${product.title} (${variant.sku})` : product.title),
  };
}
