import type { Knex } from 'knex';
import { productAggregate } from '../../commands/catalog/product.ts';
import { inventoryAggregate } from '../../commands/oms/inventory.ts';
import { productQualityAggregate } from '../../commands/quality/product-quality.ts';
import { skuUsageAggregate } from '../../commands/quality/sku-usage.ts';
import { catalogFeedAggregate, catalogFeedIdOf, type CatalogFeedCommand } from '../../commands/ucp/catalog-feed.ts';
import type { CatalogFeedSettings } from '../../commands/ucp/feed-settings.ts';
import type { CommandInput } from '../../ledger/message.ts';
import { liveSchema, type Projection } from '../../ledger/projection.ts';
import type { Worker, WorkerDeps } from '../../ledger/runtime.ts';
import { sendCommand } from '../../ledger/send-command.ts';
import { errorField } from '../../ledger/throttled-log.ts';
import { namespaced, type TopicSpec } from '../../ledger/topics.ts';
import { WakeUp } from '../../ledger/wake-up.ts';
import { defineWorker, logFailure, type TopicBatch, type WorkerContext, type WorkerHooks } from '../../ledger/worker.ts';
import { catalogProjection } from '../../projections/catalog/catalog-projection.ts';
import { feedProjection } from '../../projections/feed/feed-projection.ts';
import { feedSettingsOf, findCatalogFeed, replacedFiles } from '../../projections/feed/feed-queries.ts';
import { omsProjection } from '../../projections/oms/oms-projection.ts';
import { validationProjection } from '../../projections/validation/validation-projection.ts';
import type { ObjectStore } from '../../adapters/storage/object-store.ts';
import { feedKeys, FeedWriter, type FeedDigest } from '../../commands/ucp/feed-document.ts';
import { CompressedFile } from './compressed-file.ts';
import { feedProducts } from './feed-rows.ts';
import { FeedSchedule, type ConsumedEnd } from './feed-schedule.ts';

export type FeedWorkerOptions = {
  /** The store the files go to; created when the worker starts, closed when it stops. */
  store: () => ObjectStore;
  /** A feed is built once its changes have been quiet this long… */
  quietMs: number;
  /** …or this long after its first change not yet built, whichever comes first. */
  maxDelayMs: number;
  /** Feeds built side by side (each tenant's one at a time). */
  buildsAtOnce: number;
  /** After a build, its feed rests this many times the build's own work before the next (FeedSchedule). */
  restFactor: number;
  /** Products read per page. */
  pageSize: number;
  /** How long a build waits for the read models to reach what was consumed before it gives up (and is tried again). */
  readModelTimeoutMs: number;
  /** How long a replaced file stays in the store: at least as long as the links handed out to it are valid. */
  keepReplacedMs: number;
};

/**
 * What changes a feed: each topic, the event types of it that matter (by the `event-type` header; undefined: every
 * one), and the read model that must have applied them before the feed is read. Our own CatalogFeedPublished is not
 * among them: a publication must not make another build.
 */
const WATCHED: { topic: TopicSpec; types?: ReadonlySet<string>; projection: Projection }[] = [
  { topic: productAggregate.events, projection: catalogProjection },
  {
    topic: productQualityAggregate.events,
    types: new Set(['ValidationIssueRaised', 'ValidationIssueResolved']),
    projection: validationProjection,
  },
  {
    topic: skuUsageAggregate.events,
    types: new Set(['ValidationIssueRaised', 'ValidationIssueResolved']),
    projection: validationProjection,
  },
  {
    topic: inventoryAggregate.events,
    types: new Set(['StockAdjusted', 'StockReserved', 'StockReleased', 'StockShipped']),
    projection: omsProjection,
  },
  { topic: catalogFeedAggregate.events, types: new Set(['CatalogFeedConfigured', 'CatalogFeedRequested']), projection: feedProjection },
];

/** A built feed: its files gzip-compressed, as they are stored and served. */
type CompressedFeed = FeedDigest & { jsonLdGzip: Buffer; jsonlGzip: Buffer };
const keyOf = (tenantId: string, orgId: string) => `${tenantId}/${orgId}`;

/**
 * The catalog feed processor (issue 14): consumes the catalog, quality, inventory and feed-settings events in its own
 * consumer group, notes which tenants and orgs they touch, and rebuilds each one's feed debounced (FeedSchedule; a
 * feed requested before its first build, which a request waits for, at once):
 * waits until the read models have applied what it consumed, reads the tenant's products page by page from one
 * snapshot, writes both files under content-addressed keys, then publishes them (PublishCatalogFeed). It commits its
 * offsets only past changes every feed reflects, so a crash anywhere builds again; the same content publishes nothing.
 */
class FeedWorker implements WorkerHooks {
  private store?: ObjectStore;
  private schedule: FeedSchedule;
  private readonly running = new Set<Promise<void>>();
  /** The last offset consumed of each topic partition (namespaced topic), with the projection that reads it. */
  private readonly consumedUpTo = new Map<string, { topic: string; partition: number; offset: bigint; projection: string }>();
  private readonly deps: WorkerDeps;
  readonly onError;

  private readonly context: WorkerContext;
  private readonly options: FeedWorkerOptions;

  constructor(context: WorkerContext, options: FeedWorkerOptions) {
    this.context = context;
    this.options = options;

    this.deps = context.deps;
    this.onError = logFailure(context, 'feed-loop', 'catalog feed worker could not schedule its builds; trying again');
    this.schedule = this.newSchedule();
  }

  private newSchedule(): FeedSchedule {
    return new FeedSchedule(this.options.quietMs, this.options.maxDelayMs, this.options.restFactor);
  }

  readonly open = async (): Promise<void> => {
    this.schedule = this.newSchedule();
    this.consumedUpTo.clear();
    this.store = this.options.store();
  };

  readonly drain = async (): Promise<void> => {
    await Promise.allSettled([...this.running]);
  };

  readonly close = async (): Promise<void> => {
    await this.store?.close().catch(() => undefined);
  };

  readonly handleBatch = async (batch: TopicBatch): Promise<void> => {
    const watched = WATCHED.find((w) => namespaced(this.deps.namespace, w.topic.name) === batch.topic);
    if (!watched || batch.messages.length === 0) return;
    const keys = new Set<string>();
    const awaited = new Set<string>();
    for (const message of batch.messages) {
      const type = message.header('event-type');
      if (!message.value || (watched.types && type !== undefined && !watched.types.has(type))) continue;
      const event = await this.deps.codec.decode(message.value, { topic: batch.topic, partition: batch.partition, offset: message.offset });
      if (watched.types && !watched.types.has(event.type)) continue;
      keys.add(keyOf(event.envelope.tenantId, event.envelope.orgId));
      if (event.type === 'CatalogFeedRequested') awaited.add(keyOf(event.envelope.tenantId, event.envelope.orgId));
    }
    const end: ConsumedEnd = { topic: batch.topic, partition: batch.partition, lastOffset: batch.lastOffset };
    this.consumedUpTo.set(`${batch.topic}|${batch.partition}`, {
      topic: batch.topic,
      partition: batch.partition,
      offset: BigInt(end.lastOffset),
      projection: watched.projection.name,
    });
    this.schedule.consumed(keys, end, Date.now(), awaited);
    await this.commit();
    this.context.wake();
  };

  /** Starts the builds that are due, as many as may run at once; answers when to look again. */
  readonly round = async (): Promise<number> => {
    for (const key of this.schedule.due(Date.now())) {
      if (this.running.size >= this.options.buildsAtOnce) break;
      this.schedule.started(key);
      const build: Promise<void> = this.build(key).finally(() => {
        this.running.delete(build);
        this.context.wake();
      });
      this.running.add(build);
    }
    const waitMs = this.running.size >= this.options.buildsAtOnce ? 1_000 : (this.schedule.nextDueIn(Date.now()) ?? 1_000);
    return Math.max(10, Math.min(1_000, waitMs));
  };

  private async build(key: string): Promise<void> {
    const [tenantId = '', orgId = ''] = key.split('/');
    const startedAt = Date.now();
    try {
      await this.readModelsCaughtUp();
      const workFrom = Date.now();
      const scope = { tenantId, orgId };
      const row = await findCatalogFeed(this.deps.db, scope);
      const feed = await this.read(scope, feedSettingsOf(row));
      const published = row?.content_hash === feed.contentHash;
      if (!published) await this.publish(scope, feed);
      const builtAt = Date.now();
      this.schedule.finished(key, true, builtAt, builtAt - workFrom);
      await this.prune(scope, feedKeys(tenantId, orgId, feed));
      this.context.log.info(
        { tenantId, orgId, products: feed.productCount, items: feed.itemCount, ms: Date.now() - startedAt, changed: !published },
        'catalog feed built',
      );
    } catch (error) {
      this.schedule.finished(key, false, Date.now());
      this.context.throttled.write(
        'warn',
        'feed-build',
        { err: errorField(error), tenantId, orgId },
        'catalog feed build failed; it is tried again',
      );
    }
    await this.commit();
  }

  /** Every product of the tenant and org, from one snapshot of the read models; the files compressed as they are made. */
  private read(scope: { tenantId: string; orgId: string }, settings: CatalogFeedSettings | null): Promise<CompressedFeed> {
    return this.deps.db.transaction(
      async (trx: Knex.Transaction) => {
        const jsonLd = new CompressedFile();
        const jsonl = new CompressedFile();
        try {
          const writer = new FeedWriter(settings, { jsonLd: (bytes) => jsonLd.write(bytes), jsonl: (bytes) => jsonl.write(bytes) });
          for await (const product of feedProducts(trx, scope, this.options.pageSize)) {
            writer.add(product);
            await jsonLd.caughtUp();
            await jsonl.caughtUp();
          }
          const digest = writer.finish();
          return { ...digest, jsonLdGzip: await jsonLd.end(), jsonlGzip: await jsonl.end() };
        } catch (error) {
          jsonLd.discard();
          jsonl.discard();
          throw error;
        }
      },
      { isolationLevel: 'repeatable read', readOnly: true },
    );
  }

  /** Files first, each complete under its own new key; only then the event that makes them the served ones. */
  private async publish(scope: { tenantId: string; orgId: string }, feed: CompressedFeed): Promise<void> {
    const store = this.store as ObjectStore;
    const { jsonLdKey, jsonlKey } = feedKeys(scope.tenantId, scope.orgId, feed);
    // Stored gzip-compressed and served with Content-Encoding: gzip (HTTP clients inflate it as they read); the keys
    // are the hashes of the uncompressed content.
    const options = (contentType: string) => ({
      contentType,
      contentEncoding: 'gzip',
      cacheControl: 'public, max-age=31536000, immutable',
    });
    if (!(await store.exists(jsonLdKey))) await store.put(jsonLdKey, feed.jsonLdGzip, options('application/ld+json'));
    if (!(await store.exists(jsonlKey))) await store.put(jsonlKey, feed.jsonlGzip, options('application/jsonl'));
    const data = {
      feedId: catalogFeedIdOf(scope.tenantId, scope.orgId),
      contentHash: feed.contentHash,
      jsonLdKey,
      jsonlKey,
      productCount: feed.productCount,
      itemCount: feed.itemCount,
    };
    await this.send(scope, { type: 'PublishCatalogFeed', data }, `catalog-feed-${feed.contentHash.slice(0, 16)}`);
  }

  /**
   * Deletes the files replaced more than `keepReplacedMs` ago (never the ones served). Recorded first, then deleted:
   * a crash in between leaves files no row names, never a row naming a missing file. A failure only waits for the next build.
   */
  private async prune(scope: { tenantId: string; orgId: string }, served: { jsonLdKey: string; jsonlKey: string }): Promise<void> {
    try {
      const feedId = catalogFeedIdOf(scope.tenantId, scope.orgId);
      const before = new Date(Date.now() - this.options.keepReplacedMs);
      const keys = (await replacedFiles(this.deps.db, feedId, before)).filter((key) => key !== served.jsonLdKey && key !== served.jsonlKey);
      if (keys.length === 0) return;
      await this.send(scope, { type: 'PruneCatalogFeedFiles', data: { feedId, keys } }, `catalog-feed-prune-${feedId}`);
      const store = this.store as ObjectStore;
      for (const key of keys) await store.delete(key);
    } catch (error) {
      this.context.throttled.write('warn', 'feed-prune', { err: errorField(error), ...scope }, 'old catalog feed files not pruned yet');
    }
  }

  private async send(scope: { tenantId: string; orgId: string }, command: CommandInput<CatalogFeedCommand>, correlationId: string) {
    await sendCommand(this.deps.bus, scope, catalogFeedAggregate, command, { correlationId });
  }

  /** Resolves once every read model has applied what this worker has consumed so far. */
  private async readModelsCaughtUp(): Promise<void> {
    const targets = [...this.consumedUpTo.values()];
    const deadline = Date.now() + this.options.readModelTimeoutMs;
    const wake = new WakeUp();
    const unsubscribe = [...new Set(targets.map((t) => t.projection))].map((name) => this.deps.onProgress(name, wake.wake));
    try {
      for (;;) {
        if (await this.applied(targets)) return;
        if (this.context.stopping()) throw new Error('stopping');
        if (Date.now() >= deadline) throw new Error('the read models have not applied the consumed events yet');
        await wake.wait(200);
      }
    } finally {
      for (const off of unsubscribe) off();
    }
  }

  private async applied(targets: { topic: string; partition: number; offset: bigint; projection: string }[]): Promise<boolean> {
    for (const target of targets) {
      const row = (await this.deps
        .db(`${liveSchema({ name: target.projection })}.checkpoints`)
        .where({ topic: target.topic, partition: target.partition })
        .first('offset')) as { offset: string } | undefined;
      if (!row || BigInt(row.offset) < target.offset) return false;
    }
    return true;
  }

  private async commit(): Promise<void> {
    const offsets = this.schedule.takeCommittable();
    if (offsets.length === 0) return;
    try {
      await this.context.commit(offsets);
    } catch (error) {
      // A rebalance took the partitions: their next owner reads from the last commit and builds again.
      this.context.throttled.write('warn', 'feed-commit', { err: errorField(error) }, 'catalog feed offsets not committed');
    }
  }
}

export const feedWorker = (options: FeedWorkerOptions): Worker =>
  defineWorker({
    name: 'catalog-feed',
    component: 'feed-worker',
    // A feed is rebuilt after a quiet spell (FEED_QUIET_MS): a second more of reading behind costs it nothing.
    source: {
      kind: 'topic',
      groupId: 'commerce-ledger.catalog-feed',
      topics: WATCHED.map((w) => w.topic),
      fetch: 'batched',
      commit: { kind: 'manual' },
    },
    hooks: (context) => new FeedWorker(context, options),
  });
