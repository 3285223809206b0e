import { defineAggregate } from '../../ledger/aggregate.ts';
import { ValidationError } from '../../ledger/errors.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';
import { uuidv5 } from '../../ledger/uuid-v5.ts';
import { normalizedSettings, sameSettings, settingsOf, settingsProblems, type CatalogFeedSettings } from './feed-settings.ts';

/**
 * A tenant and org's catalog feed (issue 14, docs/decisions.md "Catalog feed"): the settings it is built with
 * (commands/ucp/feed-settings.ts) and the files it is published as. The feed processor builds the files and publishes
 * them here; a publication whose content is the current one records nothing, so a rebuild after a crash or of an
 * unchanged catalog leaves no trace in the log. A feed asked for before it has any is requested once (issue 26).
 */
const CATALOG_FEED_NAMESPACE = '4c2f8e1a-7b3d-4e59-a6c8-1d9f0b2e7a46';

export const catalogFeedIdOf = (tenantId: string, orgId: string): string => uuidv5(`${tenantId}/${orgId}`, CATALOG_FEED_NAMESPACE);

// ── Events ──────────────────────────────────────────────────────────────────
export type CatalogFeedConfigured = Event<'CatalogFeedConfigured', { feedId: string } & CatalogFeedSettings>;
/** `contentHash`: SHA-256 of both files; the keys are content-addressed (docs/decisions.md "Catalog feed"). */
export type CatalogFeedPublished = Event<
  'CatalogFeedPublished',
  { feedId: string; contentHash: string; jsonLdKey: string; jsonlKey: string; productCount: number; itemCount: number }
>;
/** Files no longer served, deleted from object storage once every link to them has expired. */
export type CatalogFeedFilesPruned = Event<'CatalogFeedFilesPruned', { feedId: string; keys: string[] }>;
/** The feed was asked for before it had any publication: the feed processor builds it. */
export type CatalogFeedRequested = Event<'CatalogFeedRequested', { feedId: string }>;
export type CatalogFeedEvent = CatalogFeedConfigured | CatalogFeedPublished | CatalogFeedFilesPruned | CatalogFeedRequested;

// ── State ───────────────────────────────────────────────────────────────────
export type CatalogFeed = { settings: CatalogFeedSettings | null; contentHash: string | null; servedKeys: string[]; requested: boolean };

export const initialState = (): CatalogFeed => ({ settings: null, contentHash: null, servedKeys: [], requested: false });

export const evolve = (state: CatalogFeed, event: CatalogFeedEvent): CatalogFeed => {
  switch (event.type) {
    case 'CatalogFeedConfigured':
      return { ...state, settings: settingsOf(event.data) };
    case 'CatalogFeedPublished':
      return { ...state, contentHash: event.data.contentHash, servedKeys: [event.data.jsonLdKey, event.data.jsonlKey] };
    case 'CatalogFeedFilesPruned':
      return state;
    case 'CatalogFeedRequested':
      return { ...state, requested: true };
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
export type RequestCatalogFeed = Command<'RequestCatalogFeed', CatalogFeedRequested['data']>;
export type CatalogFeedCommand = ConfigureCatalogFeed | PublishCatalogFeed | PruneCatalogFeedFiles | RequestCatalogFeed;

// ── Decide ──────────────────────────────────────────────────────────────────
const invalid = (path: string, message: string) => new ValidationError(`the field ${path} ${message}`, [{ path, message }]);

const configure = ({ data }: ConfigureCatalogFeed, state: CatalogFeed): CatalogFeedEvent[] => {
  const settings = normalizedSettings(settingsOf(data));
  const [problem, ...more] = settingsProblems(settings);
  if (problem) throw new ValidationError(`the field ${problem.path} ${problem.message}`, [problem, ...more]);
  if (sameSettings(state.settings, settings)) return [];
  return [{ type: 'CatalogFeedConfigured', data: { feedId: data.feedId, ...settings } }];
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

/** Once: later requests wait for the same first publication. */
const request = ({ data }: RequestCatalogFeed, state: CatalogFeed): CatalogFeedEvent[] =>
  state.contentHash !== null || state.requested ? [] : [{ type: 'CatalogFeedRequested', data: { feedId: data.feedId } }];

export const decide = (command: CatalogFeedCommand, state: CatalogFeed): CatalogFeedEvent[] => {
  switch (command.type) {
    case 'ConfigureCatalogFeed':
      return configure(command, state);
    case 'PublishCatalogFeed':
      return publish(command, state);
    case 'PruneCatalogFeedFiles':
      return prune(command, state);
    case 'RequestCatalogFeed':
      return request(command, state);
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
  events: {
    namespace: 'commerce.ledger.ucp',
    types: ['CatalogFeedConfigured', 'CatalogFeedPublished', 'CatalogFeedFilesPruned', 'CatalogFeedRequested'],
  },
});
