import { isProductEvent, type ProductEvent } from '../../commands/catalog/product.ts';
import { itemPushIdOf, type PushAction } from '../../commands/integrations/item-push.ts';
import type { LogPosition, RecordedEvent } from '../../ledger/message.ts';
import type { ProjectionContext } from '../../ledger/projection.ts';
import { insertRows, tableIn } from '../record-set.ts';
import type { PushEvent, PushQueueEvent } from './push-event.ts';

type Owner = { tenant_id: string; org_id: string };
const owner = (event: RecordedEvent): Owner => ({ tenant_id: event.envelope.tenantId, org_id: event.envelope.orgId });
const ownerKey = ({ tenant_id, org_id }: Owner) => `${tenant_id}/${org_id}`.toLowerCase();
const idKey = (id: string) => id.toLowerCase();

type Position = Pick<LogPosition, 'topic' | 'partition' | 'offset'>;

type ItemRow = Owner & {
  item_push_id: string;
  connection_id: string;
  product_id: string;
  desired_action: PushAction;
  /** The requests this run adds (the whole count of a row it inserts). */
  desired_seq: number;
  product_topic: string;
  product_partition: number;
  product_offset: string;
};

type ProductFold = { id: string; inserted?: Owner; deleted: boolean; position: Position };

/** The active connections of each owner named: one statement. */
async function activeConnections({ sql, schema }: ProjectionContext, owners: Owner[]): Promise<Map<string, string[]>> {
  const byOwner = new Map<string, string[]>();
  if (owners.length === 0) return byOwner;
  const { rows } = await sql.query<Owner & { id: string }>(
    `select id, tenant_id, org_id from ${tableIn(schema, 'connections')}
     where status = 'ACTIVE' and (tenant_id, org_id) in (select * from unnest($1::uuid[], $2::uuid[]))`,
    [owners.map((o) => o.tenant_id), owners.map((o) => o.org_id)],
  );
  for (const row of rows) byOwner.set(ownerKey(row), [...(byOwner.get(ownerKey(row)) ?? []), row.id]);
  return byOwner;
}

/** The items the products named already have, on any connection: what a deletion of one of them requests again. */
async function storedItems({ sql, schema }: ProjectionContext, productIds: string[]): Promise<ItemRow[]> {
  if (productIds.length === 0) return [];
  const { rows } = await sql.query<ItemRow>(
    `select item_push_id, connection_id, product_id, tenant_id, org_id from ${tableIn(schema, 'items')} where product_id = any($1::uuid[])`,
    [productIds],
  );
  return rows.map((row) => ({
    ...row,
    desired_action: 'UPSERT',
    desired_seq: 0,
    product_topic: '',
    product_partition: 0,
    product_offset: '0',
  }));
}

/**
 * The products' rows as the run leaves them. A row the run's first change inserts has that change's owner (an
 * existing row keeps its own); a deletion of a product no event has inserted changes nothing, as an update of no row.
 */
async function writeProducts({ sql, schema }: ProjectionContext, products: ProductFold[]): Promise<void> {
  const positioned = (product: ProductFold) => ({
    id: product.id,
    deleted: product.deleted,
    topic: product.position.topic,
    partition: product.position.partition,
    offset: product.position.offset,
  });
  const upserts = products.flatMap((product) => (product.inserted ? [{ ...positioned(product), ...product.inserted }] : []));
  await insertRows(
    sql,
    schema,
    'products',
    upserts,
    'on conflict (id) do update set deleted = excluded.deleted, topic = excluded.topic, partition = excluded.partition, "offset" = excluded."offset"',
  );
  const deletions = products.filter((product) => !product.inserted).map(positioned);
  if (deletions.length === 0) return;
  await sql.query(
    `update ${tableIn(schema, 'products')} p set deleted = true, topic = d.topic, partition = d.partition, "offset" = d."offset"
     from unnest($1::uuid[], $2::text[], $3::int[], $4::bigint[]) as d(id, topic, partition, "offset") where p.id = d.id`,
    [deletions.map((d) => d.id), deletions.map((d) => d.topic), deletions.map((d) => d.partition), deletions.map((d) => d.offset)],
  );
}

/** Every item's requests of the run in one upsert: the counts add up, the last request's action and position stay. */
async function writeItems({ sql, schema }: ProjectionContext, items: ItemRow[]): Promise<void> {
  const target = tableIn(schema, 'items');
  await insertRows(
    sql,
    schema,
    'items',
    items.filter((item) => item.desired_seq > 0),
    `on conflict (item_push_id) do update set desired_action = excluded.desired_action,
       desired_seq = ${target}.desired_seq + excluded.desired_seq, product_topic = excluded.product_topic,
       product_partition = excluded.product_partition, product_offset = excluded.product_offset`,
  );
}

const newItem = (event: RecordedEvent<ProductEvent>, connectionId: string): ItemRow => ({
  item_push_id: itemPushIdOf(connectionId, event.data.productId),
  connection_id: connectionId,
  product_id: event.data.productId,
  ...owner(event),
  desired_action: 'UPSERT',
  desired_seq: 0,
  product_topic: '',
  product_partition: 0,
  product_offset: '0',
});

/** One more request of the item, as `requestAll` and a deletion's update make it. */
function request(item: ItemRow, action: PushAction, { topic, partition, offset }: Position): void {
  item.desired_action = action;
  item.desired_seq += 1;
  item.product_topic = topic;
  item.product_partition = partition;
  item.product_offset = offset;
}

/**
 * A run of product events, folded in log order: no product event changes the connections, so one read of the
 * owners' active connections (and one of the stored items of the products deleted) serves the whole run.
 */
async function applyProductRun(run: RecordedEvent<ProductEvent>[], context: ProjectionContext): Promise<void> {
  if (run.length === 0) return;
  const changes = run.filter((event) => event.type !== 'ProductDeleted');
  const owners = new Map(changes.map((event) => [ownerKey(owner(event)), owner(event)]));
  const connections = await activeConnections(context, [...owners.values()]);
  const deletedIds = run.filter((event) => event.type === 'ProductDeleted').map((event) => event.data.productId);
  const items = new Map<string, ItemRow>();
  // The items of each product that exist at this point of the run (what a deletion requests again).
  const itemsOf = new Map<string, Set<ItemRow>>();
  const add = (item: ItemRow) => {
    items.set(item.item_push_id, item);
    const key = idKey(item.product_id);
    itemsOf.set(key, (itemsOf.get(key) ?? new Set()).add(item));
    return item;
  };
  for (const item of await storedItems(context, deletedIds)) add(item);
  const products = new Map<string, ProductFold>();
  for (const event of run) {
    const { productId } = event.data;
    const key = idKey(productId);
    const deleted = event.type === 'ProductDeleted';
    const before = products.get(key);
    const inserted = before?.inserted ?? (deleted ? undefined : owner(event));
    products.set(key, { id: before?.id ?? productId, inserted, deleted, position: event.position });
    if (deleted) {
      for (const item of itemsOf.get(key) ?? []) request(item, 'DELETE', event.position);
      continue;
    }
    for (const connectionId of connections.get(ownerKey(owner(event))) ?? []) {
      const item = items.get(itemPushIdOf(connectionId, productId)) ?? add(newItem(event, connectionId));
      request(item, 'UPSERT', event.position);
    }
  }
  await writeProducts(context, [...products.values()]);
  await writeItems(context, [...items.values()]);
}

/**
 * What a batch of push events does: each maximal run of product events (a bulk import's bulk) is applied set-based, a
 * few statements a run; every other event (connections, explicit requests, outcomes) is applied on its own by
 * `applyOther`, in order.
 */
export const pushBatchOf =
  (applyOther: (event: RecordedEvent<PushQueueEvent>, context: ProjectionContext) => Promise<void>) =>
  async (events: RecordedEvent<PushEvent>[], context: ProjectionContext): Promise<void> => {
    let run: RecordedEvent<ProductEvent>[] = [];
    for (const event of events) {
      if (isProductEvent(event)) {
        run.push(event);
        continue;
      }
      await applyProductRun(run, context);
      run = [];
      await applyOther(event, context);
    }
    await applyProductRun(run, context);
  };
