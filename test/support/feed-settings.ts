import type { CatalogFeedSettings } from '../../commands/ucp/feed-settings.ts';

/** A feed's settings for tests: only a seller and a template unless `overrides` say more. */
export const feedSettings = (overrides: Partial<CatalogFeedSettings> = {}): CatalogFeedSettings => ({
  sellerName: 'Acme Outdoor',
  productUrlTemplate: 'https://shop.example.com/products/{sku}',
  sellerUrl: null,
  storeCountry: null,
  targetCountries: [],
  privacyPolicyUrl: null,
  termsOfServiceUrl: null,
  returnPolicyUrl: null,
  returnWindowDays: null,
  itemCondition: null,
  shippingPrice: null,
  shippingCurrency: null,
  ...overrides,
});

/** The seller's pages the tests configure, and the ACP `Seller.links` a line then carries. */
export const SELLER_PAGES = {
  sellerUrl: 'https://shop.example.com/',
  privacyPolicyUrl: 'https://shop.example.com/privacy',
  termsOfServiceUrl: 'https://shop.example.com/terms',
  returnPolicyUrl: 'https://shop.example.com/returns',
} as const;

export const SELLER_LINKS = [
  { type: 'website', url: SELLER_PAGES.sellerUrl },
  { type: 'privacy_policy', url: SELLER_PAGES.privacyPolicyUrl },
  { type: 'terms_of_service', url: SELLER_PAGES.termsOfServiceUrl },
  { type: 'refund_policy', url: SELLER_PAGES.returnPolicyUrl },
];
