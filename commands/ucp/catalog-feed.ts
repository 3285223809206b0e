import { defineAggregate } from '../../ledger/aggregate.ts';
import { ValidationError } from '../../ledger/errors.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';
import { uuidv5 } from '../../ledger/uuid-v5.ts';

/**
 * A tenant and org's catalog feed (issue 14, docs/decisions.md "Catalog feed"): the settings it is built with (seller
 * name, product URL template) and the files it is published as. The feed processor builds the files and publishes them
 * here; a publication whose content is the current one records nothing, so a rebuild after a crash or of an unchanged
 * catalog leaves no trace in the log.
 */
const CATALOG_FEED_NAMESPACE = '4c2f8e1a-7b3d-4e59-a6c8-1d9f0b2e7a46';

export const catalogFeedIdOf = (tenantId: string, orgId: string): string => uuidv5(`${tenantId}/${orgId}`, CATALOG_FEED_NAMESPACE);

/** The placeholders a product URL template may name: the product's id, or its SKU (the first variant's when it has none). */
export const URL_PLACEHOLDERS = ['id', 'sku'] as const;
export type UrlPlaceholder = (typeof URL_PLACEHOLDERS)[number];
export const MAX_SELLER_NAME = 200;
export const MAX_URL_TEMPLATE = 2_000;

/** Why `template` is not a usable product URL template, or undefined when it is. */
export function urlTemplateProblem(template: string): string | undefined {
  if (template.length > MAX_URL_TEMPLATE) return `must be at most ${MAX_URL_TEMPLATE} characters long`;
  const named = [...template.matchAll(/\{([^{}]*)\}/g)].map((match) => match[1] as string);
  const unknown = named.find((name) => !(URL_PLACEHOLDERS as readonly string[]).includes(name));
  if (unknown !== undefined) return `names the unknown placeholder {${unknown}} (use {id} or {sku})`;
  if (/[{}]/.test(template.replace(/\{(id|sku)\}/g, ''))) return 'has an unbalanced { or }';
  if (named.length === 0) return 'must name {id} or {sku}, or every product would get the same URL';
  let url: URL;
  try {
    url = new URL(template.replace(/\{(id|sku)\}/g, 'x'));
  } catch {
    return 'must be an absolute URL such as https://shop.example.com/products/{sku}';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry credentials';
  return undefined;
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

// ── Events ──────────────────────────────────────────────────────────────────
export type CatalogFeedSettings = { sellerName: string; productUrlTemplate: string };
export type CatalogFeedConfigured = Event<'CatalogFeedConfigured', { feedId: string } & CatalogFeedSettings>;
/** `contentHash`: SHA-256 of both files; the keys are content-addressed (docs/decisions.md "Catalog feed"). */
export type CatalogFeedPublished = Event<
  'CatalogFeedPublished',
  { feedId: string; contentHash: string; jsonLdKey: string; jsonlKey: string; productCount: number; itemCount: number }
>;
/** Files no longer served, deleted from object storage once every link to them has expired. */
export type CatalogFeedFilesPruned = Event<'CatalogFeedFilesPruned', { feedId: string; keys: string[] }>;
export type CatalogFeedEvent = CatalogFeedConfigured | CatalogFeedPublished | CatalogFeedFilesPruned;

// ── State ───────────────────────────────────────────────────────────────────
export type CatalogFeed = { settings: CatalogFeedSettings | null; contentHash: string | null; servedKeys: string[] };

export const initialState = (): CatalogFeed => ({ settings: null, contentHash: null, servedKeys: [] });

export const evolve = (state: CatalogFeed, event: CatalogFeedEvent): CatalogFeed => {
  switch (event.type) {
    case 'CatalogFeedConfigured': {
      const { sellerName, productUrlTemplate } = event.data;
      return { ...state, settings: { sellerName, productUrlTemplate } };
    }
    case 'CatalogFeedPublished':
      return { ...state, contentHash: event.data.contentHash, servedKeys: [event.data.jsonLdKey, event.data.jsonlKey] };
    case 'CatalogFeedFilesPruned':
      return state;
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
export type ConfigureCatalogFeed = Command<'ConfigureCatalogFeed', CatalogFeedConfigured['data']>;
export type PublishCatalogFeed = Command<'PublishCatalogFeed', CatalogFeedPublished['data']>;
export type PruneCatalogFeedFiles = Command<'PruneCatalogFeedFiles', CatalogFeedFilesPruned['data']>;
export type CatalogFeedCommand = ConfigureCatalogFeed | PublishCatalogFeed | PruneCatalogFeedFiles;

// ── Decide ──────────────────────────────────────────────────────────────────
const invalid = (path: string, message: string) => new ValidationError(`the field ${path} ${message}`, [{ path, message }]);

const configure = ({ data }: ConfigureCatalogFeed, state: CatalogFeed): CatalogFeedEvent[] => {
  const sellerName = data.sellerName.trim();
  if (sellerName === '') throw invalid('sellerName', 'must not be empty');
  if (sellerName.length > MAX_SELLER_NAME) throw invalid('sellerName', `must be at most ${MAX_SELLER_NAME} characters long`);
  const problem = urlTemplateProblem(data.productUrlTemplate);
  if (problem) throw invalid('productUrlTemplate', problem);
  const { settings } = state;
  if (settings?.sellerName === sellerName && settings.productUrlTemplate === data.productUrlTemplate) return [];
  return [{ type: 'CatalogFeedConfigured', data: { feedId: data.feedId, sellerName, productUrlTemplate: data.productUrlTemplate } }];
};

const publish = ({ data }: PublishCatalogFeed, state: CatalogFeed): CatalogFeedEvent[] => {
  if (data.contentHash === state.contentHash) return [];
  if (!/^[0-9a-f]{64}$/.test(data.contentHash)) throw invalid('contentHash', 'must be 64 lower-case hex digits (SHA-256)');
  if (data.productCount < 0 || data.itemCount < 0) throw invalid('productCount', 'must not be negative');
  return [{ type: 'CatalogFeedPublished', data }];
};

/** The files being served are never pruned (a publication may have brought an old content back since it was chosen). */
const prune = ({ data }: PruneCatalogFeedFiles, state: CatalogFeed): CatalogFeedEvent[] => {
  const keys = [...new Set(data.keys)].filter((key) => !state.servedKeys.includes(key));
  return keys.length === 0 ? [] : [{ type: 'CatalogFeedFilesPruned', data: { feedId: data.feedId, keys } }];
};

export const decide = (command: CatalogFeedCommand, state: CatalogFeed): CatalogFeedEvent[] => {
  switch (command.type) {
    case 'ConfigureCatalogFeed':
      return configure(command, state);
    case 'PublishCatalogFeed':
      return publish(command, state);
    case 'PruneCatalogFeedFiles':
      return prune(command, state);
    default: {
      const exhaustive: never = command;
      throw new Error(`unknown command ${JSON.stringify(exhaustive)}`);
    }
  }
};

export const catalogFeedDecider: Decider<CatalogFeedCommand, CatalogFeedEvent, CatalogFeed> = { initialState, evolve, decide };

/** One per tenant and org, keyed by `catalogFeedIdOf`; its owner is that tenant and org (the single writer's rule). */
export const catalogFeedAggregate = defineAggregate({
  name: 'catalog-feed',
  stream: 'ucp.catalog-feed',
  decider: catalogFeedDecider,
  id: 'feedId',
  events: { namespace: 'commerce.ledger.ucp', types: ['CatalogFeedConfigured', 'CatalogFeedPublished', 'CatalogFeedFilesPruned'] },
});
