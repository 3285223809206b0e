import { productAggregate } from '../../commands/catalog/product.ts';
import { connectionAggregate, type ConnectionEvent } from '../../commands/integrations/connection.ts';
import { itemPushAggregate, itemPushIdOf, type ItemPushEvent, type PushAction } from '../../commands/integrations/item-push.ts';
import { productPushAggregate, type ProductPushEvent } from '../../commands/integrations/product-push.ts';
import type { LogPosition, RecordedEvent } from '../../ledger/message.ts';
import { handlerOf, projection, type EventHandlers, type Projection, type ProjectionContext } from '../../ledger/projection.ts';
import { productEventTypes } from '../catalog/catalog-event.ts';
import { pushBatchOf } from './push-batch.ts';
import type { PushEvent, PushQueueEvent } from './push-event.ts';
import { pushMigrations } from './push-migrations.ts';

const at = (event: RecordedEvent) => new Date(event.envelope.occurredAt);
const owner = (event: RecordedEvent) => ({ tenant_id: event.envelope.tenantId, org_id: event.envelope.orgId });

type ProductPosition = Pick<LogPosition, 'topic' | 'partition' | 'offset'>;

const activeConnections = (ctx: ProjectionContext, event: RecordedEvent): Promise<{ id: string }[]> =>
  ctx
    .table('connections')
    .where({ ...owner(event), status: 'ACTIVE' })
    .select('id');

type Target = { productId: string; connectionId: string; position: ProductPosition };

/** One more request for each (product, connection) of `targets`; `initial` marks the requests of an initial sync. */
async function requestAll(ctx: ProjectionContext, event: RecordedEvent, targets: Target[], action: PushAction, initial = false) {
  const items = `${ctx.schema}.items`;
  // Set-based, a thousand rows a statement: an initial sync of a large catalog is a few statements, not one per product.
  for (let from = 0; from < targets.length; from += 1_000) {
    const rows = targets.slice(from, from + 1_000).map(({ productId, connectionId, position }) => ({
      item_push_id: itemPushIdOf(connectionId, productId),
      connection_id: connectionId,
      product_id: productId,
      ...owner(event),
      desired_action: action,
      desired_seq: 1,
      product_topic: position.topic,
      product_partition: position.partition,
      product_offset: position.offset,
      initial_seq: initial ? 1 : null,
    }));
    await ctx.db
      .table(items)
      .insert(rows)
      .onConflict('item_push_id')
      .merge({
        desired_action: action,
        desired_seq: ctx.db.raw('??.desired_seq + 1', [items]),
        product_topic: ctx.db.raw('excluded.product_topic'),
        product_partition: ctx.db.raw('excluded.product_partition'),
        product_offset: ctx.db.raw('excluded.product_offset'),
        ...(initial ? { initial_seq: ctx.db.raw('??.desired_seq + 1', [items]) } : {}),
      });
  }
}

/** One more request for the product on each of `connectionIds`. */
const request = (
  ctx: ProjectionContext,
  event: RecordedEvent,
  productId: string,
  connectionIds: string[],
  action: PushAction,
  position: ProductPosition,
) =>
  requestAll(
    ctx,
    event,
    connectionIds.map((connectionId) => ({ productId, connectionId, position })),
    action,
  );

/** The product is to be removed from every platform it was pushed to (whatever the connection's status now). */
async function removeEverywhere(ctx: ProjectionContext, productId: string, position: ProductPosition): Promise<void> {
  await ctx
    .table('items')
    .where({ product_id: productId })
    .update({
      desired_action: 'DELETE',
      desired_seq: ctx.db.raw('desired_seq + 1'),
      product_topic: position.topic,
      product_partition: position.partition,
      product_offset: position.offset,
    });
}

type ProductRow = { id: string; deleted: boolean; topic: string; partition: number; offset: string };

const productPushEvents: EventHandlers<ProductPushEvent> = {
  ProductPushRequested: async (event, ctx) => {
    const { productId, action } = event.data;
    const product = (await ctx
      .table('products')
      .where({ id: productId, ...owner(event) })
      .first()) as ProductRow | undefined;
    if (!product) return;
    if (action === 'DELETE') return removeEverywhere(ctx, productId, product);
    if (product.deleted) return;
    const connections = await activeConnections(ctx, event);
    await request(
      ctx,
      event,
      productId,
      connections.map((c) => c.id),
      'UPSERT',
      product,
    );
  },
};

/** The initial sync of a connection just (re)activated: one request for every product of its tenant and org. */
async function initialSync(event: RecordedEvent, ctx: ProjectionContext, connectionId: string): Promise<void> {
  const products = (await ctx
    .table('products')
    .where({ ...owner(event), deleted: false })
    .select()) as ProductRow[];
  await ctx.table('items').where({ connection_id: connectionId }).update({ initial_seq: null, leased_until: null });
  const targets = products.map((product) => ({ productId: product.id, connectionId, position: product }));
  await requestAll(ctx, event, targets, 'UPSERT', true);
  await ctx.table('connections').where({ id: connectionId }).update({ initial_total: products.length });
}

const connectionEvents: EventHandlers<ConnectionEvent> = {
  // The order mapping's setting: nothing the push needs.
  ConnectionDefaultLocationSet: async () => undefined,
  // Shown on the connection (its read model); the worker's retry needs nothing from here.
  ConnectionWebhookRefused: async () => undefined,
  ConnectionSaved: async (event, ctx) => {
    const { connectionId, unifiedConnectionId } = event.data;
    const row = { id: connectionId, ...owner(event), unified_connection_id: unifiedConnectionId, status: 'ACTIVE', status_reason: null };
    await ctx
      .table('connections')
      .insert({ ...row, activated_at: at(event) })
      .onConflict('id')
      .merge({ ...row, activated_at: at(event) });
    await initialSync(event, ctx, connectionId);
  },
  ConnectionDisconnected: (event, ctx) =>
    ctx.table('connections').where({ id: event.data.connectionId }).update({ status: 'DISCONNECTED' }),
  ConnectionAuthFailed: (event, ctx) =>
    ctx.table('connections').where({ id: event.data.connectionId }).update({ status: 'AUTH_FAILED', status_reason: event.data.reason }),
  ConnectionWebhookSubscribed: (event, ctx) =>
    ctx
      .table('webhooks')
      .insert({
        connection_id: event.data.connectionId,
        object_type: event.data.objectType,
        event: event.data.event,
        subscription_id: event.data.subscriptionId,
      })
      .onConflict(['connection_id', 'object_type', 'event'])
      .merge(['subscription_id']),
};

/**
 * An outcome may be read before the request it answers (a rebuild reads the topics in no common order): it then makes
 * the row, so the remote id it names is never forgotten.
 */
const outcomeRow = (event: RecordedEvent<ItemPushEvent>) => ({
  item_push_id: event.data.itemPushId,
  connection_id: event.data.connectionId,
  product_id: event.data.productId,
  ...owner(event),
  desired_action: 'UPSERT',
  desired_seq: 0,
  product_topic: '',
  product_partition: 0,
  product_offset: 0,
});

const itemPushEvents: EventHandlers<ItemPushEvent> = {
  ItemPushed: async (event, ctx) => {
    const { seq, remoteId, action } = event.data;
    const items = `${ctx.schema}.items`;
    const remoteVariants = JSON.stringify(action === 'DELETE' ? [] : (event.data.variants ?? []));
    await ctx
      .table('items')
      .insert({
        ...outcomeRow(event),
        desired_seq: seq,
        pushed_seq: seq,
        remote_id: remoteId,
        remote_variants: remoteVariants,
        last_pushed_at: at(event),
      })
      .onConflict('item_push_id')
      .merge({
        pushed_seq: ctx.db.raw('greatest(??.pushed_seq, ?)', [items, seq]),
        remote_id: action === 'DELETE' ? null : remoteId,
        remote_variants: remoteVariants,
        failures: 0,
        dead_lettered: false,
        next_attempt_at: null,
        last_pushed_at: at(event),
        leased_until: null,
        create_started: false,
      });
  },
  ItemPushFailed: async (event, ctx) => {
    const { attempt, deadLettered, retryAt, reason, httpStatus, action } = event.data;
    const items = `${ctx.schema}.items`;
    const outcome = {
      failures: attempt,
      dead_lettered: deadLettered,
      next_attempt_at: retryAt === null ? null : new Date(retryAt),
      last_error: reason,
      last_http_status: httpStatus,
      last_failed_at: at(event),
      leased_until: null,
    };
    await ctx
      .table('items')
      .insert({ ...outcomeRow(event), ...outcome, create_started: action === 'UPSERT' })
      .onConflict('item_push_id')
      .merge({
        ...outcome,
        // A create that failed may still have landed (an answer lost on the way): look before creating again.
        create_started: ctx.db.raw('??.create_started or (??.remote_id is null and ?)', [items, items, action === 'UPSERT']),
      });
  },
  ItemPushRedriven: (event, ctx) =>
    ctx
      .table('items')
      .where({ item_push_id: event.data.itemPushId })
      .update({ failures: 0, dead_lettered: false, next_attempt_at: null, leased_until: null }),
};

/** Connections, explicit requests and outcomes: each applied on its own, in order, between the runs of product events. */
const otherEvents: EventHandlers<PushQueueEvent> = { ...productPushEvents, ...connectionEvents, ...itemPushEvents };

/**
 * The push queue: which product is wanted on which connection, and what the platform has. A catalog change or an
 * explicit request adds one request to the item of every active connection of the product's tenant and org; a
 * connection's (re)activation requests every product it has (the initial sync); the push worker's reported outcomes
 * (item push events) say what was pushed. The worker claims the items whose requests are ahead of their pushes.
 *
 * The push queue and the sync status of every connection, as the push worker and GET …/connections/{id}/sync read them.
 */
export const pushProjection: Projection = projection<PushEvent>({
  name: 'push',
  topics: [productAggregate.events, productPushAggregate.events, connectionAggregate.events, itemPushAggregate.events],
  // A catalog write does not wait for the push queue (nothing it answers shows it); a saved connection's sync status does.
  awaitedOn: [connectionAggregate.events],
  // Its bulk, the catalog's events, no write waits for: read in fewer, larger rounds.
  fetch: 'gathered',
  migrations: pushMigrations,
  canHandle: [...productEventTypes, ...(Object.keys(otherEvents) as PushQueueEvent['type'][])],
  handle: pushBatchOf(handlerOf(otherEvents)),
});
