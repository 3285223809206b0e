import { describe, expect, it } from 'vitest';
import {
  catalogFeedAggregate,
  catalogFeedDecider,
  catalogFeedIdOf,
  type CatalogFeedCommand,
  type CatalogFeedEvent,
} from '../../commands/ucp/catalog-feed.ts';
import type { CatalogFeedSettings } from '../../commands/ucp/feed-settings.ts';
import { ValidationError } from '../../ledger/errors.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';
import { feedSettings, SELLER_PAGES } from '../support/feed-settings.ts';

const given = DeciderSpecification.for(catalogFeedDecider);

const feedId = catalogFeedIdOf('5f0c1a52-1c39-4a57-9a4e-0f0d6d7f7a01', '0b6a3c1e-8d2f-4f0a-b1c4-2e9d7a6b5c02');
const TEMPLATE = 'https://shop.example.com/products/{sku}';
const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);

const settings = (overrides: Partial<CatalogFeedSettings> = {}) =>
  feedSettings({ sellerName: 'Acme', productUrlTemplate: TEMPLATE, itemCondition: 'new', ...overrides });
const configureWith = (overrides: Partial<CatalogFeedSettings>): WithoutMetadata<CatalogFeedCommand> => ({
  type: 'ConfigureCatalogFeed',
  data: { feedId, ...settings(overrides) },
});
const configuredWith = (overrides: Partial<CatalogFeedSettings>): CatalogFeedEvent => ({
  type: 'CatalogFeedConfigured',
  data: { feedId, ...settings(overrides) },
});
const configure = (sellerName = 'Acme', productUrlTemplate = TEMPLATE) => configureWith({ sellerName, productUrlTemplate });
const configured = (sellerName = 'Acme', productUrlTemplate = TEMPLATE) => configuredWith({ sellerName, productUrlTemplate });
const SELLER = {
  ...SELLER_PAGES,
  storeCountry: 'DE',
  targetCountries: ['AT', 'DE'],
  returnWindowDays: 30,
  itemCondition: 'refurbished',
  shippingPrice: '4.95',
  shippingCurrency: 'EUR',
} as const satisfies Partial<CatalogFeedSettings>;
const publication = (contentHash: string) => ({
  feedId,
  contentHash,
  jsonLdKey: `feeds/t/o/${contentHash}.jsonld`,
  jsonlKey: `feeds/t/o/${contentHash}.jsonl`,
  productCount: 3,
  itemCount: 5,
});
const publish = (contentHash: string): WithoutMetadata<CatalogFeedCommand> => ({
  type: 'PublishCatalogFeed',
  data: publication(contentHash),
});
const published = (contentHash: string): CatalogFeedEvent => ({ type: 'CatalogFeedPublished', data: publication(contentHash) });

describe('catalog feed decider', () => {
  it('is one aggregate per tenant and org, on its own topics', () => {
    expect(catalogFeedIdOf('t1', 'o1')).toBe(catalogFeedIdOf('t1', 'o1'));
    expect(catalogFeedIdOf('t1', 'o1')).not.toBe(catalogFeedIdOf('t1', 'o2'));
    expect(catalogFeedAggregate.events.name).toBe('ucp.catalog-feed.events.v1');
    expect(catalogFeedAggregate.aggregateIdOf({ data: publication(HASH_A) })).toBe(feedId);
  });

  describe('settings', () => {
    it('records the settings, the seller name trimmed', () => {
      given()
        .when(configure('  Acme  '))
        .then([configured('Acme')]);
    });

    it('records nothing when they are the current ones', () => {
      given([configured()]).when(configure()).thenNothingHappened();
    });

    it('records a change of either', () => {
      given([configured()])
        .when(configure('Acme Ltd'))
        .then([configured('Acme Ltd')]);
      given([configured()])
        .when(configure('Acme', 'https://shop.example.com/p/{id}'))
        .then([configured('Acme', 'https://shop.example.com/p/{id}')]);
    });

    it("records the seller's site, countries, policies, condition and shipping rate", () => {
      given()
        .when(configureWith({ ...SELLER, targetCountries: [...SELLER.targetCountries] }))
        .then([configuredWith({ ...SELLER, targetCountries: ['AT', 'DE'] })]);
    });

    it('keeps countries upper-cased and the target countries sorted, each once, so the same settings again record nothing', () => {
      given()
        .when(configureWith({ storeCountry: 'de', targetCountries: ['de', 'AT', 'at'] }))
        .then([configuredWith({ storeCountry: 'DE', targetCountries: ['AT', 'DE'] })]);
      given([configuredWith({ storeCountry: 'DE', targetCountries: ['AT', 'DE'] })])
        .when(configureWith({ storeCountry: 'de', targetCountries: ['DE', 'AT'] }))
        .thenNothingHappened();
    });

    it('replaces every setting: one left out is cleared', () => {
      given([configuredWith({ ...SELLER, targetCountries: ['AT', 'DE'] })])
        .when(configure())
        .then([configured()]);
    });

    it('refuses what is not a country, an http(s) URL, or a window or rate without the countries they apply to', () => {
      const refused = (overrides: Partial<CatalogFeedSettings>, path: string) =>
        given()
          .when(configureWith(overrides))
          .thenThrows(ValidationError, (error) => error.details.some((detail) => detail.path === path));
      refused({ storeCountry: 'UK' }, 'storeCountry');
      refused({ targetCountries: ['DE', 'XX'] }, 'targetCountries.1');
      refused({ sellerUrl: 'ftp://shop.example.com/' }, 'sellerUrl');
      refused({ privacyPolicyUrl: '/privacy' }, 'privacyPolicyUrl');
      refused({ returnWindowDays: 30 }, 'returnWindowDays');
      refused({ targetCountries: ['DE'], returnWindowDays: -1 }, 'returnWindowDays');
      refused({ shippingPrice: '4.95', shippingCurrency: 'EUR' }, 'shippingPrice');
      refused({ targetCountries: ['DE'], shippingPrice: '4.95' }, 'shippingPrice');
    });

    it('refuses a blank seller name and a bad template', () => {
      given().when(configure('   ')).thenThrows(ValidationError);
      given()
        .when(configure('Acme', 'https://shop.example.com/products'))
        .thenThrows(ValidationError, (error) => error.details[0]?.path === 'productUrlTemplate');
    });
  });

  describe('publication', () => {
    it('records a new content', () => {
      given()
        .when(publish(HASH_A))
        .then([published(HASH_A)]);
      given([published(HASH_A)])
        .when(publish(HASH_B))
        .then([published(HASH_B)]);
    });

    it('records nothing for the content already published (a rebuild, a crash before the offsets were committed)', () => {
      given([configured(), published(HASH_A)])
        .when(publish(HASH_A))
        .thenNothingHappened();
    });

    it('records an earlier content again once another replaced it (the catalog went back)', () => {
      given([published(HASH_A), published(HASH_B)])
        .when(publish(HASH_A))
        .then([published(HASH_A)]);
    });

    it('refuses a hash that is not a SHA-256', () => {
      given().when(publish('not-a-hash')).thenThrows(ValidationError);
    });
  });
});

describe('a feed asked for before its first publication', () => {
  const request: WithoutMetadata<CatalogFeedCommand> = { type: 'RequestCatalogFeed', data: { feedId } };
  const requested: CatalogFeedEvent = { type: 'CatalogFeedRequested', data: { feedId } };

  it('is requested once, however many ask', () => {
    given().when(request).then([requested]);
    given([configured()]).when(request).then([requested]);
    given([requested]).when(request).thenNothingHappened();
  });

  it('is not requested once it has been published', () => {
    given([published(HASH_A)])
      .when(request)
      .thenNothingHappened();
    given([requested, published(HASH_A)])
      .when(request)
      .thenNothingHappened();
  });
});

describe('pruning old files', () => {
  const prune = (keys: string[]): WithoutMetadata<CatalogFeedCommand> => ({ type: 'PruneCatalogFeedFiles', data: { feedId, keys } });
  const old = publication(HASH_A);

  it('records the files deleted, each once', () => {
    given([published(HASH_A), published(HASH_B)])
      .when(prune([old.jsonLdKey, old.jsonlKey, old.jsonLdKey]))
      .then([{ type: 'CatalogFeedFilesPruned', data: { feedId, keys: [old.jsonLdKey, old.jsonlKey] } }]);
  });

  it('never prunes the files being served (a publication may have brought them back)', () => {
    given([published(HASH_A), published(HASH_B), published(HASH_A)])
      .when(prune([old.jsonLdKey, old.jsonlKey]))
      .thenNothingHappened();
    const served = publication(HASH_B);
    given([published(HASH_A), published(HASH_B)])
      .when(prune([old.jsonLdKey, served.jsonlKey]))
      .then([{ type: 'CatalogFeedFilesPruned', data: { feedId, keys: [old.jsonLdKey] } }]);
  });
});
