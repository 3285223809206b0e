import { describe, expect, it } from 'vitest';
import { COUNTRY_CODE_COUNT, countryProblem } from '../../commands/ucp/countries.ts';
import { httpUrlProblem, productUrl, settingsOf, urlTemplateProblem, type CatalogFeedSettings } from '../../commands/ucp/feed-settings.ts';
import { feedSettings, SELLER_PAGES } from '../support/feed-settings.ts';

describe('product URL template', () => {
  it.each([
    ['https://shop.example.com/products/{sku}'],
    ['https://shop.example.com/p/{id}?ref=feed'],
    ['http://localhost:8080/{sku}/{id}'],
  ])('accepts %s', (template) => {
    expect(urlTemplateProblem(template)).toBeUndefined();
  });

  it.each([
    ['https://shop.example.com/products', 'must name {id} or {sku}'],
    ['https://shop.example.com/{slug}', 'unknown placeholder {slug}'],
    ['https://shop.example.com/{sku', 'unbalanced'],
    ['/products/{sku}', 'absolute URL'],
    ['ftp://shop.example.com/{sku}', 'http or https'],
    ['javascript:alert({id})', 'http or https'],
    ['https://user:pw@shop.example.com/{sku}', 'credentials'],
    [`https://shop.example.com/${'x'.repeat(2_000)}/{id}`, 'at most 2000'],
  ])('refuses %s', (template, reason) => {
    expect(urlTemplateProblem(template)).toContain(reason);
  });

  it('fills in the values URL-encoded, and gives none when a value is missing', () => {
    expect(productUrl('https://s.example/{sku}?id={id}', { id: 'p1', sku: 'A B/1' })).toBe('https://s.example/A%20B%2F1?id=p1');
    expect(productUrl('https://s.example/{sku}', { id: 'p1', sku: null })).toBeUndefined();
    expect(productUrl('https://s.example/{id}', { id: 'p1', sku: null })).toBe('https://s.example/p1');
  });
});

describe('seller page URLs', () => {
  it.each([['https://shop.example.com/'], ['http://localhost:8080/privacy?lang=de']])('accepts %s', (url) => {
    expect(httpUrlProblem(url)).toBeUndefined();
  });

  it.each([
    ['shop.example.com/privacy', 'absolute'],
    ['mailto:privacy@shop.example.com', 'http or https'],
    ['https://user:pw@shop.example.com/', 'credentials'],
    [`https://shop.example.com/${'x'.repeat(2_000)}`, 'at most 2000'],
  ])('refuses %s', (url, reason) => {
    expect(httpUrlProblem(url)).toContain(reason);
  });
});

describe('countries', () => {
  it('are the 249 officially assigned ISO 3166-1 alpha-2 codes, upper case', () => {
    expect(COUNTRY_CODE_COUNT).toBe(249);
    for (const code of ['US', 'DE', 'GB', 'AX', 'SS', 'CW']) expect(countryProblem(code)).toBeUndefined();
  });

  it.each([
    ['UK', 'is GB'],
    ['EU', 'ISO 3166-1'],
    ['XK', 'ISO 3166-1'],
    ['de', 'ISO 3166-1'],
    ['DEU', 'ISO 3166-1'],
  ])('refuses %s', (code, reason) => {
    expect(countryProblem(code)).toContain(reason);
  });
});

describe('settings of an event', () => {
  it('keep every setting and nothing else', () => {
    const settings = feedSettings({
      ...SELLER_PAGES,
      storeCountry: 'DE',
      targetCountries: ['DE'],
      returnWindowDays: 14,
      itemCondition: 'used',
      shippingPrice: '4.95',
      shippingCurrency: 'EUR',
    });
    expect(Object.values(settings)).not.toContain(null);
    expect(settingsOf({ feedId: 'f', ...settings } as CatalogFeedSettings)).toEqual(settings);
  });
});
