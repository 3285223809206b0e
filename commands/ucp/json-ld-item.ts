import type { CatalogFeedSettings, ItemCondition } from './feed-settings.ts';
import {
  canonicalUrl,
  gtinOf,
  listingOf,
  present,
  productGtins,
  type FeedMedia,
  type FeedProduct,
  type OfferedVariant,
} from './feed-product.ts';

/**
 * A listed product in the schema.org JSON-LD feed, as Google's merchant listings read it: a `Product` with its offer
 * (or none), or, with two or more offered variants, a `ProductGroup` whose `hasVariant` holds a `Product` per variant.
 * Offers carry the item condition, the seller, shipping and the return policy the settings state.
 */
type JsonLd = Record<string, unknown>;

const SCHEMA = 'https://schema.org/';
const CONDITIONS: Record<ItemCondition, string> = {
  new: `${SCHEMA}NewCondition`,
  refurbished: `${SCHEMA}RefurbishedCondition`,
  used: `${SCHEMA}UsedCondition`,
};

const images = (media: readonly FeedMedia[]): string[] | undefined => {
  const urls = media.flatMap((m) => canonicalUrl(m.url) ?? []);
  return urls.length > 0 ? urls : undefined;
};

const seller = (settings: CatalogFeedSettings): JsonLd =>
  present({
    '@type': 'Organization',
    name: settings.sellerName,
    url: canonicalUrl(settings.sellerUrl),
    address: settings.storeCountry ? { '@type': 'PostalAddress', addressCountry: settings.storeCountry } : undefined,
  });

const shipping = ({ shippingPrice, shippingCurrency, targetCountries }: CatalogFeedSettings): JsonLd | undefined =>
  shippingPrice && shippingCurrency && targetCountries.length > 0
    ? {
        '@type': 'OfferShippingDetails',
        shippingRate: { '@type': 'MonetaryAmount', value: shippingPrice, currency: shippingCurrency },
        shippingDestination: targetCountries.map((country) => ({ '@type': 'DefinedRegion', addressCountry: country })),
      }
    : undefined;

const returnCategory = (days: number | null): string | undefined =>
  days === null ? undefined : days === 0 ? `${SCHEMA}MerchantReturnNotPermitted` : `${SCHEMA}MerchantReturnFiniteReturnWindow`;

const returnPolicy = ({ returnWindowDays, returnPolicyUrl, targetCountries }: CatalogFeedSettings): JsonLd | undefined =>
  targetCountries.length > 0 && (returnWindowDays !== null || returnPolicyUrl)
    ? present({
        '@type': 'MerchantReturnPolicy',
        applicableCountry: targetCountries,
        returnPolicyCategory: returnCategory(returnWindowDays),
        merchantReturnDays: returnWindowDays !== null && returnWindowDays > 0 ? returnWindowDays : undefined,
        merchantReturnLink: canonicalUrl(returnPolicyUrl),
      })
    : undefined;

const offer = (variant: OfferedVariant, url: string | undefined, settings: CatalogFeedSettings | null): JsonLd =>
  present({
    '@type': 'Offer',
    price: variant.price,
    priceCurrency: variant.currency,
    availability: `${SCHEMA}${variant.available > 0 ? 'InStock' : 'OutOfStock'}`,
    itemCondition: settings?.itemCondition ? CONDITIONS[settings.itemCondition] : undefined,
    url,
    seller: settings ? seller(settings) : undefined,
    shippingDetails: settings ? shipping(settings) : undefined,
    hasMerchantReturnPolicy: settings ? returnPolicy(settings) : undefined,
  });

const common = (product: FeedProduct, url: string | undefined) => ({
  productID: product.id,
  name: product.title,
  description: product.description,
  brand: product.brand === null ? undefined : { '@type': 'Brand', name: product.brand },
  category: product.category,
  url,
});

/** The JSON-LD item of a listed product. */
export function jsonLdItem(product: FeedProduct, settings: CatalogFeedSettings | null): JsonLd {
  const { url, offered, ownMedia, mediaOf, titleOf } = listingOf(product, settings);
  if (offered.length < 2) {
    const offers = offered.map((variant) =>
      present({ '@type': 'Offer', sku: variant.sku, ...gtinOf(variant.barcode), ...offer(variant, url, settings) }),
    );
    return present({
      '@type': 'Product',
      ...common(product, url),
      sku: product.sku,
      ...productGtins(product.variants),
      image: images(product.media),
      offers: offers.length > 0 ? offers : undefined,
    });
  }
  const groupImages = images(ownMedia);
  return present({
    '@type': 'ProductGroup',
    ...common(product, url),
    productGroupID: product.sku ?? product.id,
    image: groupImages,
    // variesBy is left out: a variant records no option (size, colour, …) that would tell what it varies by.
    hasVariant: offered.map((variant) =>
      present({
        '@type': 'Product',
        productID: variant.id,
        name: titleOf(variant),
        sku: variant.sku,
        ...gtinOf(variant.barcode),
        image: images(mediaOf(variant)) ?? groupImages,
        offers: offer(variant, url, settings),
      }),
    ),
  });
}
