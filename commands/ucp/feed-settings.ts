import type { ErrorDetail } from '../../ledger/errors.ts';
import { AMOUNT_RULE, isAmount } from '../amount.ts';
import { countryProblem } from './countries.ts';

/**
 * What a tenant and org's catalog feed is built with (docs/decisions.md "Catalog feed"): the seller the offers name, the
 * shop's product pages, and what agents and merchant listings need of the seller: its site, its country, the countries
 * it sells to, its policies, the condition of its goods and a flat shipping rate.
 */
export type CatalogFeedSettings = {
  sellerName: string;
  productUrlTemplate: string;
  sellerUrl: string | null;
  /** ISO 3166-1 alpha-2: where the store is. */
  storeCountry: string | null;
  /** ISO 3166-1 alpha-2, sorted, no repeats: where it sells and ships to. */
  targetCountries: string[];
  privacyPolicyUrl: string | null;
  termsOfServiceUrl: string | null;
  returnPolicyUrl: string | null;
  /** Days a buyer has to return an item; 0: returns are not accepted; null: not stated. */
  returnWindowDays: number | null;
  itemCondition: ItemCondition | null;
  /** A flat rate to every target country, an exact decimal string, with its currency; both or neither. */
  shippingPrice: string | null;
  shippingCurrency: string | null;
};

export const ITEM_CONDITIONS = ['new', 'refurbished', 'used'] as const;
export type ItemCondition = (typeof ITEM_CONDITIONS)[number];

/** The placeholders a product URL template may name: the product's id, or its SKU (the first variant's when it has none). */
export const URL_PLACEHOLDERS = ['id', 'sku'] as const;
export type UrlPlaceholder = (typeof URL_PLACEHOLDERS)[number];
export const MAX_SELLER_NAME = 200;
export const MAX_URL = 2_000;
export const MAX_RETURN_WINDOW_DAYS = 3_650;
export const MAX_TARGET_COUNTRIES = 50;

/** Why `value` is not an absolute http(s) URL without credentials, or undefined when it is. */
export function httpUrlProblem(value: string): string | undefined {
  if (value.length > MAX_URL) return `must be at most ${MAX_URL} characters long`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute http(s) URL such as https://shop.example.com/';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry credentials';
  return undefined;
}

/** Why `price` is not an amount written as the edge writes it (at least two places), or undefined when it is. */
function shippingPriceProblem(price: string): string | undefined {
  if (!/^\d+\.\d{2,}$/.test(price)) return 'must be an exact decimal string';
  return isAmount(price) ? undefined : AMOUNT_RULE;
}

/** Why `template` is not a usable product URL template, or undefined when it is. */
export function urlTemplateProblem(template: string): string | undefined {
  if (template.length > MAX_URL) return `must be at most ${MAX_URL} characters long`;
  const named = [...template.matchAll(/\{([^{}]*)\}/g)].map((match) => match[1] as string);
  const unknown = named.find((name) => !(URL_PLACEHOLDERS as readonly string[]).includes(name));
  if (unknown !== undefined) return `names the unknown placeholder {${unknown}} (use {id} or {sku})`;
  if (/[{}]/.test(template.replace(/\{(id|sku)\}/g, ''))) return 'has an unbalanced { or }';
  if (named.length === 0) return 'must name {id} or {sku}, or every product would get the same URL';
  const problem = httpUrlProblem(template.replace(/\{(id|sku)\}/g, 'x'));
  return problem?.startsWith('must be an absolute') ? 'must be an absolute URL such as https://shop.example.com/products/{sku}' : problem;
}

/** The template with each placeholder replaced by its value, URL-encoded; undefined when a value it names is missing. */
export function productUrl(template: string, values: Record<UrlPlaceholder, string | null>): string | undefined {
  let missing = false;
  const url = template.replace(/\{(id|sku)\}/g, (_, name: UrlPlaceholder) => {
    const value = values[name];
    if (value === null || value === '') missing = true;
    return encodeURIComponent(value ?? '');
  });
  return missing ? undefined : url;
}

/** The settings as the aggregate keeps them: seller name trimmed, countries upper-cased, target countries sorted once each. */
export const normalizedSettings = (settings: CatalogFeedSettings): CatalogFeedSettings => ({
  ...settings,
  sellerName: settings.sellerName.trim(),
  storeCountry: settings.storeCountry?.toUpperCase() ?? null,
  targetCountries: [...new Set(settings.targetCountries.map((code) => code.toUpperCase()))].sort(),
  shippingCurrency: settings.shippingCurrency?.toUpperCase() ?? null,
});

const problemOf = (path: string, message: string | undefined): ErrorDetail[] => (message ? [{ path, message }] : []);
const urlProblems = (path: string, value: string | null) => problemOf(path, value === null ? undefined : httpUrlProblem(value));

/** What is wrong with (normalized) settings, field by field (paths are the event's field names); empty when nothing. */
export function settingsProblems(settings: CatalogFeedSettings): ErrorDetail[] {
  const { sellerName, targetCountries, returnWindowDays, shippingPrice, shippingCurrency } = settings;
  const needsCountries = (what: string) =>
    targetCountries.length === 0 ? `needs targetCountries: the countries ${what} applies to` : undefined;
  return [
    ...problemOf('sellerName', sellerName === '' ? 'must not be empty' : undefined),
    ...problemOf('sellerName', sellerName.length > MAX_SELLER_NAME ? `must be at most ${MAX_SELLER_NAME} characters long` : undefined),
    ...problemOf('productUrlTemplate', urlTemplateProblem(settings.productUrlTemplate)),
    ...urlProblems('sellerUrl', settings.sellerUrl),
    ...urlProblems('privacyPolicyUrl', settings.privacyPolicyUrl),
    ...urlProblems('termsOfServiceUrl', settings.termsOfServiceUrl),
    ...urlProblems('returnPolicyUrl', settings.returnPolicyUrl),
    ...problemOf('storeCountry', settings.storeCountry === null ? undefined : countryProblem(settings.storeCountry)),
    ...targetCountries.flatMap((code, i) => problemOf(`targetCountries.${i}`, countryProblem(code))),
    ...problemOf(
      'targetCountries',
      targetCountries.length > MAX_TARGET_COUNTRIES ? `must name at most ${MAX_TARGET_COUNTRIES} countries` : undefined,
    ),
    ...problemOf(
      'returnWindowDays',
      returnWindowDays !== null &&
        !(Number.isInteger(returnWindowDays) && returnWindowDays >= 0 && returnWindowDays <= MAX_RETURN_WINDOW_DAYS)
        ? `must be a whole number of days from 0 to ${MAX_RETURN_WINDOW_DAYS}`
        : undefined,
    ),
    ...problemOf('returnWindowDays', returnWindowDays === null ? undefined : needsCountries('a return window')),
    ...problemOf(
      'itemCondition',
      settings.itemCondition === null || ITEM_CONDITIONS.includes(settings.itemCondition) ? undefined : 'is unknown',
    ),
    ...problemOf(
      'shippingPrice',
      (shippingPrice === null) !== (shippingCurrency === null) ? 'and shippingCurrency come together' : undefined,
    ),
    ...problemOf('shippingPrice', shippingPrice === null ? undefined : shippingPriceProblem(shippingPrice)),
    ...problemOf(
      'shippingCurrency',
      shippingCurrency !== null && !/^[A-Z]{3}$/.test(shippingCurrency) ? 'must be an ISO 4217 code' : undefined,
    ),
    ...problemOf('shippingPrice', shippingPrice === null ? undefined : needsCountries('a shipping rate')),
  ];
}

const SETTINGS_FIELDS = [
  'sellerName',
  'productUrlTemplate',
  'sellerUrl',
  'storeCountry',
  'targetCountries',
  'privacyPolicyUrl',
  'termsOfServiceUrl',
  'returnPolicyUrl',
  'returnWindowDays',
  'itemCondition',
  'shippingPrice',
  'shippingCurrency',
] as const satisfies readonly (keyof CatalogFeedSettings)[];

/** Only the settings' own fields, in one order (an event's data also carries its feedId). */
export const settingsOf = (data: CatalogFeedSettings): CatalogFeedSettings =>
  Object.fromEntries(SETTINGS_FIELDS.map((field) => [field, data[field]])) as CatalogFeedSettings;

export const sameSettings = (a: CatalogFeedSettings | null, b: CatalogFeedSettings): boolean =>
  a !== null && JSON.stringify(settingsOf(a)) === JSON.stringify(settingsOf(b));
