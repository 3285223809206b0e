import { connectionAggregate } from '../../commands/integrations/connection.ts';
import { itemPushAggregate, type PushedVariant, type RecordItemPushed } from '../../commands/integrations/item-push.ts';
import type { Aggregate } from '../../ledger/aggregate.ts';
import type { Command, CommandInput, Event } from '../../ledger/message.ts';
import type { Worker, WorkerDeps } from '../../ledger/runtime.ts';
import { postCommand } from '../../ledger/send-command.ts';
import { sleep } from '../../ledger/sleep.ts';
import { errorField } from '../../ledger/throttled-log.ts';
import { namespaced } from '../../ledger/topics.ts';
import { ReadModelGate } from '../../ledger/read-model-gate.ts';
import { defineWorker, logFailure, type WorkerContext, type WorkerHooks } from '../../ledger/worker.ts';
import { catalogProjection } from '../../projections/catalog/catalog-projection.ts';
import { pushProjection } from '../../projections/integrations/push-projection.ts';
import { loadPlatformProducts, productReference, type PlatformProduct } from './commerce-item.ts';
import { ProviderError, type ConnectionProvider } from '../../adapters/provider/provider.ts';
import { pushVariants, removeVariants } from './variant-push.ts';
import { anyActiveConnection, claimDueItems, connectionsNeedingWebhooks, markCreateStarted, type ClaimedItem } from './push-claims.ts';

export type PushWorkerOptions = {
  provider: () => ConnectionProvider & { close(): Promise<void> };
  /** Where the platform's webhook deliveries reach us: `<PUBLIC_BASE_URL>/unified/webhook`. */
  hookUrl: string;
  /** How long a claimed item is left alone before another attempt may take it (it covers a crash mid-push). */
  leaseMs: number;
  /** Calls in flight to one connection at most: a slow platform holds up only its own items. */
  perConnection: number;
};

/**
 * The platform events that become orders (the inbound receiver maps them): subscribed on every active connection. The
 * provider's orders are `accounting_order` objects (its `WebhookObjectType`; there is no commerce order type).
 */
export const ORDER_WEBHOOKS = [
  { object_type: 'accounting_order', event: 'created' },
  { object_type: 'accounting_order', event: 'updated' },
] as const;

/** Without news from the queue's projections; their progress wakes the worker at once. */
const IDLE_POLL_MS = 2_000;
const WEBHOOK_RETRY_MS = 10_000;
const WEBHOOK_RETRY_MAX_MS = 60 * 60_000;
const WEBHOOK_RECHECK_MS = 30_000;

type Owner = { tenant_id: string; org_id: string };
type PushTarget = Omit<RecordItemPushed['data'], 'remoteId' | 'created' | 'variants'>;
type Pushed = { remoteId: string | null; created: boolean; variants: PushedVariant[] };

/**
 * Pushes products to the platforms: claims due items from the push queue (projections/integrations/push-projection.ts),
 * makes the provider calls, and reports each outcome to the item's push aggregate, which counts attempts and schedules
 * retries. It also subscribes every active connection to the platform's order events. It heals by itself: a failed
 * claim is tried again, an outcome it could not report is left to the item's lease.
 */
class PushWorker implements WorkerHooks {
  private provider?: ConnectionProvider & { close(): Promise<void> };
  private readonly deps: WorkerDeps;
  private queueChanged = true;
  private lastWebhookCheck = 0;
  /** Whether any connection is active (the push queue's `connections`): no claims while none is. */
  private readonly anyActive: ReadModelGate;
  /** Calls in flight per connection (its platform has not answered yet). */
  private readonly inFlight = new Map<string, number>();
  /** Claimed items waiting for a free slot of their connection (their leases cover the wait). */
  private readonly queued = new Map<string, { claim: ClaimedItem; item: PlatformProduct | undefined }[]>();
  /** Outcomes being reported to the ledger. */
  private readonly reporting = new Set<Promise<void>>();
  private readonly pausedUntil = new Map<string, number>();
  /** Subscription attempts per connection since its last success, and when the next may be made. */
  private readonly webhookTries = new Map<string, { attempts: number; nextAt: number }>();
  readonly onError;

  private readonly context: WorkerContext;
  private readonly options: PushWorkerOptions;

  constructor(context: WorkerContext, options: PushWorkerOptions) {
    this.context = context;
    this.options = options;

    this.deps = context.deps;
    const connectionsTopic = namespaced(this.deps.namespace, connectionAggregate.events.name);
    this.anyActive = new ReadModelGate({
      read: () => anyActiveConnection(this.deps.db),
      changedBy: connectionsChangedBy(connectionsTopic),
      pollMs: IDLE_POLL_MS,
    });
    this.onError = logFailure(context, 'push-claim', 'push worker could not claim work; trying again');
  }

  readonly open = async (): Promise<void> => {
    this.provider = this.options.provider();
    this.anyActive.forget();
  };

  /**
   * New requests and reported outcomes reach the queue through the push projection; a request becomes due once the
   * catalog projection shows its product. Nothing is due while no connection is active.
   */
  readonly news = (projection: string, topic: string): boolean => {
    const { wake, changed } = this.anyActive.news(projection, topic);
    if (changed) this.queueChanged = true;
    return wake;
  };

  readonly round = async (): Promise<number | void> => {
    // Subscriptions are missing only after a (re)activation, which the push projection's progress announces; a slow
    // check besides covers a subscription that failed.
    const sinceCheck = Date.now() - this.lastWebhookCheck;
    if ((this.queueChanged && sinceCheck >= 1_000) || sinceCheck >= WEBHOOK_RECHECK_MS) {
      this.queueChanged = false;
      this.lastWebhookCheck = Date.now();
      await this.subscribeWebhooks();
    }
    const claimed = (await this.anyActive.holds()) ? await this.claimAndPush() : 0;
    return claimed === 0 ? undefined : 0;
  };

  /** Queued items are left to their leases; calls in flight and their reports are finished. */
  readonly drain = async (): Promise<void> => {
    this.queued.clear();
    while ([...this.inFlight.values()].some((n) => n > 0) || this.reporting.size > 0) await sleep(20);
  };

  readonly close = async (): Promise<void> => {
    await this.provider?.close();
  };

  /**
   * Tops up every connection's local queue to twice its calls in flight at most (so a freed slot starts the next item
   * without waiting for a claim), and starts what the slots allow. A paused connection (429) takes nothing new.
   */
  private async claimAndPush(): Promise<number> {
    const now = Date.now();
    const { perConnection, leaseMs } = this.options;
    const held = 2 * perConnection;
    const busy: Record<string, number> = {};
    for (const [id, n] of this.inFlight) busy[id] = n + (this.queued.get(id)?.length ?? 0);
    for (const [id, until] of this.pausedUntil) {
      if (until > now) busy[id] = held;
      else this.pausedUntil.delete(id);
    }
    const claimed = await claimDueItems(this.deps.db, { perConnection: held, busy, leaseMs });
    // A connection paused before may be due again: its queue goes on.
    for (const connectionId of this.queued.keys()) this.startQueued(connectionId);
    if (claimed.length === 0) return 0;
    const items = await loadPlatformProducts(
      this.deps.db,
      claimed.filter((c) => c.desired_action === 'UPSERT').map((c) => c.product_id),
    );
    for (const claim of claimed) {
      const queue = this.queued.get(claim.connection_id) ?? [];
      queue.push({ claim, item: items.get(claim.product_id) });
      this.queued.set(claim.connection_id, queue);
    }
    for (const connectionId of new Set(claimed.map((c) => c.connection_id))) this.startQueued(connectionId);
    return claimed.length;
  }

  /** Starts queued items of the connection while it has free slots and is not paused (429). */
  private startQueued(connectionId: string): void {
    const queue = this.queued.get(connectionId) ?? [];
    if ((this.pausedUntil.get(connectionId) ?? 0) > Date.now()) return;
    while (queue.length > 0 && (this.inFlight.get(connectionId) ?? 0) < this.options.perConnection) {
      const { claim, item } = queue.shift()!;
      this.inFlight.set(connectionId, (this.inFlight.get(connectionId) ?? 0) + 1);
      const reported = this.pushOne(claim, item, () => {
        // The platform has answered: its slot is free while the outcome is being reported.
        this.inFlight.set(connectionId, (this.inFlight.get(connectionId) ?? 1) - 1);
        this.startQueued(connectionId);
        if ((this.queued.get(connectionId)?.length ?? 0) < this.options.perConnection) this.context.wake();
      });
      this.reporting.add(reported);
      void reported.finally(() => this.reporting.delete(reported));
    }
  }

  /** `answered` is called once the platform's calls are over, whatever their outcome, before the report. */
  private async pushOne(claim: ClaimedItem, item: PlatformProduct | undefined, answered: () => void): Promise<void> {
    const target: PushTarget = {
      itemPushId: claim.item_push_id,
      connectionId: claim.connection_id,
      productId: claim.product_id,
      action: claim.desired_action,
      seq: Number(claim.desired_seq),
    };
    const performed = this.perform(claim, item);
    void performed.then(answered, answered);
    try {
      await this.send(claim, itemPushAggregate, { type: 'RecordItemPushed', data: { ...target, ...(await performed) } });
    } catch (error) {
      if (!(error instanceof ProviderError)) {
        // Nothing reported (the ledger or the database is away): the lease runs out and the item is tried again.
        this.context.throttled.write(
          'warn',
          'push-report',
          { err: errorField(error) },
          'push outcome not reported; the item will be retried',
        );
        return;
      }
      await this.failed(claim, target, error).catch((reportError: unknown) =>
        this.context.throttled.write(
          'warn',
          'push-report',
          { err: errorField(reportError) },
          'push failure not reported; the item will be retried',
        ),
      );
    }
  }

  private async failed(claim: ClaimedItem, target: PushTarget, error: ProviderError): Promise<void> {
    // A revoked or unknown connection (any 404 reaching here is the connection's: item 404s are handled in `perform`).
    if (error.kind === 'auth' || error.kind === 'not_found') {
      this.pausedUntil.set(claim.connection_id, Date.now() + 5_000);
      await this.send(claim, connectionAggregate, {
        type: 'MarkConnectionAuthFailed',
        data: { connectionId: claim.connection_id, reason: error.message },
      });
      return;
    }
    if (error.kind === 'rate_limited') this.pausedUntil.set(claim.connection_id, Date.now() + (error.retryAfterMs ?? 1_000));
    await this.send(claim, itemPushAggregate, {
      type: 'RecordItemPushFailed',
      data: {
        ...target,
        reason: error.message,
        httpStatus: error.status ?? null,
        retryable: error.retryable,
        retryAfterMs: error.retryAfterMs ?? null,
        jitter: Math.random(),
      },
    });
  }

  /**
   * The calls one item needs: the item, then its variants as itemvariants of it. Answers the platform's item id (null
   * once deleted), whether this created it, and its variants' ids.
   */
  private async perform(claim: ClaimedItem, product: PlatformProduct | undefined): Promise<Pushed> {
    const provider = this.provider;
    if (!provider) throw new Error('push worker not started');
    const connection = claim.unified_connection_id;
    let remoteId = claim.remote_id;
    // Recorded variants belong to the recorded item; an item found again by its reference has its variants looked up.
    const known: PushedVariant[] | undefined = remoteId === null ? undefined : claim.remote_variants;
    if (remoteId === null && claim.create_was_started) {
      remoteId = (await provider.findItemByReference(connection, productReference(claim.product_id)))?.id ?? null;
    }
    if (claim.desired_action === 'DELETE') {
      if (remoteId !== null) {
        await removeVariants(provider, connection, { itemId: remoteId, productId: claim.product_id, known });
        await provider.deleteItem(connection, remoteId);
      }
      return { remoteId: null, created: false, variants: [] };
    }
    // Deleted since it was requested: its removal is requested too, and comes next.
    if (!product) return { remoteId, created: false, variants: known ?? [] };
    let created = false;
    if (remoteId !== null) {
      try {
        await provider.updateItem(connection, remoteId, product.item);
      } catch (error) {
        if (!(error instanceof ProviderError && error.kind === 'not_found')) throw error;
        // Gone from the platform (removed there by hand, say): it is created again.
        await markCreateStarted(this.deps.db, claim.item_push_id);
        remoteId = null;
      }
    }
    if (remoteId === null) {
      remoteId = (await provider.createItem(connection, product.item)).id;
      created = true;
    }
    const target = { itemId: remoteId, productId: claim.product_id, known: created ? [] : known, fresh: created };
    const variants = await pushVariants(provider, connection, target, product.variants);
    return { remoteId, created, variants };
  }

  private async subscribeWebhooks(): Promise<void> {
    const provider = this.provider;
    if (!provider) return;
    const wanted = ORDER_WEBHOOKS.map((w) => `${w.object_type}:${w.event}`);
    const now = Date.now();
    for (const connection of await connectionsNeedingWebhooks(this.deps.db, wanted)) {
      const tried = this.webhookTries.get(connection.id);
      if (tried && now < tried.nextAt) continue;
      const attempts = (tried?.attempts ?? 0) + 1;
      // Backs off from WEBHOOK_RETRY_MS, doubling to an hour: a refusal that lasts is not asked again every few seconds.
      this.webhookTries.set(connection.id, {
        attempts,
        nextAt: now + Math.min(WEBHOOK_RETRY_MS * 2 ** (attempts - 1), WEBHOOK_RETRY_MAX_MS),
      });
      let hook: (typeof ORDER_WEBHOOKS)[number] | undefined;
      try {
        const existing = await provider.listWebhooks(connection.unified_connection_id);
        for (hook of ORDER_WEBHOOKS) {
          if (connection.subscribed.includes(`${hook.object_type}:${hook.event}`)) continue;
          const { object_type: objectType, event } = hook;
          const same = existing.find((e) => e.hook_url === this.options.hookUrl && e.object_type === objectType && e.event === event);
          const subscription =
            same ??
            (await provider.createWebhook({ connection_id: connection.unified_connection_id, hook_url: this.options.hookUrl, ...hook }));
          await this.send(connection, connectionAggregate, {
            type: 'RecordWebhookSubscription',
            data: { connectionId: connection.id, subscriptionId: subscription.id, objectType, event },
          });
        }
        this.webhookTries.delete(connection.id);
      } catch (error) {
        if (error instanceof ProviderError && (error.kind === 'auth' || error.kind === 'not_found')) {
          await this.send(connection, connectionAggregate, {
            type: 'MarkConnectionAuthFailed',
            data: { connectionId: connection.id, reason: error.message },
          });
        } else if (error instanceof ProviderError && error.kind === 'rejected' && hook) {
          // Refused for good as asked (a 4xx): shown on the connection until a later try succeeds.
          await this.send(connection, connectionAggregate, {
            type: 'RecordWebhookRefused',
            data: {
              connectionId: connection.id,
              objectType: hook.object_type,
              event: hook.event,
              reason: error.message,
              httpStatus: error.status ?? null,
            },
          });
        } else {
          this.context.throttled.write(
            'warn',
            'webhook-subscribe',
            { err: errorField(error) },
            'webhook subscription failed; trying again',
          );
        }
      }
    }
  }

  private async send<C extends Command, E extends Event, S>(
    owner: Owner,
    aggregate: Aggregate<C, E, S>,
    input: CommandInput<NoInfer<C>>,
  ): Promise<void> {
    await postCommand(this.deps.bus, { tenantId: owner.tenant_id, orgId: owner.org_id }, aggregate, input);
  }
}

/**
 * Only a connection event can make a connection active or not (the push queue's `connections`, which the push
 * projection keeps): only the push projection's progress on the connections' topic has the worker look again, and
 * again for missing webhook subscriptions. Any other progress (a product, a request, an outcome, the catalog) wakes it
 * only while a connection is active.
 */
export const connectionsChangedBy =
  (connectionsTopic: string) =>
  (projection: string, topic: string): boolean =>
    projection === pushProjection.name && topic === connectionsTopic;

/** The product push to every active connection, with its provider client made afresh on every (re)start. */
export const pushWorker = (options: PushWorkerOptions): Worker =>
  defineWorker({
    name: 'push',
    component: 'push-worker',
    source: { kind: 'queue', wokenBy: [pushProjection.name, catalogProjection.name], idlePollMs: IDLE_POLL_MS },
    hooks: (context) => new PushWorker(context, options),
  });
