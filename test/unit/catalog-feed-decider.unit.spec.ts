import { describe, expect, it } from 'vitest';
import {
  catalogFeedAggregate,
  catalogFeedDecider,
  catalogFeedIdOf,
  productUrl,
  urlTemplateProblem,
  type CatalogFeedCommand,
  type CatalogFeedEvent,
} from '../../commands/ucp/catalog-feed.ts';
import { ValidationError } from '../../ledger/errors.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(catalogFeedDecider);

const feedId = catalogFeedIdOf('5f0c1a52-1c39-4a57-9a4e-0f0d6d7f7a01', '0b6a3c1e-8d2f-4f0a-b1c4-2e9d7a6b5c02');
const TEMPLATE = 'https://shop.example.com/products/{sku}';
const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);

const configure = (sellerName = 'Acme', productUrlTemplate = TEMPLATE): WithoutMetadata<CatalogFeedCommand> => ({
  type: 'ConfigureCatalogFeed',
  data: { feedId, sellerName, productUrlTemplate },
});
const configured = (sellerName = 'Acme', productUrlTemplate = TEMPLATE): CatalogFeedEvent => ({
  type: 'CatalogFeedConfigured',
  data: { feedId, sellerName, productUrlTemplate },
});
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
