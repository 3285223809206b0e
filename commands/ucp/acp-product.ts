import { Decimal } from 'decimal.js';
import type { CatalogFeedSettings } from './feed-settings.ts';
import {
  canonicalUrl,
  gtinOf,
  listingOf,
  present,
  type FeedMedia,
  type FeedProduct,
  type Listing,
  type OfferedVariant,
} from './feed-product.ts';

/**
 * A listed product as a line of the Agentic Commerce Protocol's `products.jsonl` (ACP 2026-04-17, `Product` of
 * spec/2026-04-17/json-schema/schema.feed.json; a copy is in test/fixtures/acp): the product with a `Variant` per
 * offered variant. Undefined for a product with nothing on offer.
 */
type AcpObject = Record<string, unknown>;

/** Digits by currency code, as ICU gave them: a formatter costs tens of microseconds to make, and a feed prices every variant. */
const knownDigits = new Map<string, number>();

/** The currency's ISO 4217 minor-unit digits (ICU's table), 2 for a code ICU does not know. */
export const fractionDigits = (currency: string): number => {
  const known = knownDigits.get(currency);
  if (known !== undefined) return known;
  let digits = 2;
  try {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    // not a currency ICU knows: 2
  }
  // Only well-formed codes are kept, so a stream of odd strings cannot grow the map.
  if (/^[A-Z]{3}$/.test(currency)) knownDigits.set(currency, digits);
  return digits;
};

/**
 * The price in the currency's ISO 4217 minor units (cents, yen, fils), rounded half up when it is more precise than
 * they are; undefined beyond the integers JSON carries exactly.
 */
export function minorUnits(price: string, currency: string): number | undefined {
  const amount = new Decimal(price).times(new Decimal(10).pow(fractionDigits(currency))).toDecimalPlaces(0, Decimal.ROUND_HALF_UP);
  const units = amount.toNumber();
  return Number.isSafeInteger(units) ? units : undefined;
}

const mediaList = (media: readonly FeedMedia[]): AcpObject[] | undefined => {
  const list = media.flatMap((m) => {
    const url = canonicalUrl(m.url);
    return url ? [present({ type: 'image', url, alt_text: m.altText })] : [];
  });
  return list.length > 0 ? list : undefined;
};

/** The seller's site and policies as ACP `Link`s (its types are open; `website` names the seller's site). */
const sellerLinks = (settings: CatalogFeedSettings): AcpObject[] | undefined => {
  const links = (
    [
      ['website', settings.sellerUrl],
      ['privacy_policy', settings.privacyPolicyUrl],
      ['terms_of_service', settings.termsOfServiceUrl],
      ['refund_policy', settings.returnPolicyUrl],
    ] as const
  ).flatMap(([type, value]) => {
    const url = canonicalUrl(value);
    return url ? [{ type, url }] : [];
  });
  return links.length > 0 ? links : undefined;
};

const variantOf = (product: FeedProduct, listing: Listing, variant: OfferedVariant, settings: CatalogFeedSettings | null) => {
  const amount = minorUnits(variant.price, variant.currency);
  const inStock = variant.available > 0;
  const gtin = Object.values(gtinOf(variant.barcode))[0];
  return present({
    id: variant.id,
    title: listing.titleOf(variant),
    url: listing.url,
    barcodes: gtin ? [{ type: 'GTIN', value: gtin }] : undefined,
    price: amount === undefined ? undefined : { amount, currency: variant.currency },
    availability: { available: inStock, status: inStock ? 'in_stock' : 'out_of_stock' },
    categories: product.category ? [{ value: product.category, taxonomy: 'merchant' }] : undefined,
    condition: settings?.itemCondition ? [settings.itemCondition] : undefined,
    media: mediaList(listing.mediaOf(variant)),
    seller: settings ? present({ name: settings.sellerName, links: sellerLinks(settings) }) : undefined,
  });
};

export function acpProduct(product: FeedProduct, settings: CatalogFeedSettings | null): AcpObject | undefined {
  const listing = listingOf(product, settings);
  if (listing.offered.length === 0) return undefined;
  return present({
    id: product.id,
    title: product.title,
    description: product.description ? { plain: product.description } : undefined,
    url: listing.url,
    media: mediaList(listing.ownMedia),
    variants: listing.offered.map((variant) => variantOf(product, listing, variant, settings)),
  });
}
