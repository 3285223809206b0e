import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BulkItemFailure, BulkItemsProcessed } from '../../commands/bulk/bulk-job.ts';
import type { BrandEvent } from '../../commands/catalog/brand.ts';
import type { ProductEvent } from '../../commands/catalog/product.ts';
import type { TaxonomyEvent } from '../../commands/catalog/taxonomy.ts';
import type { ConnectionEvent } from '../../commands/integrations/connection.ts';
import { itemPushIdOf, type ItemPushEvent } from '../../commands/integrations/item-push.ts';
import type { ProductPushEvent } from '../../commands/integrations/product-push.ts';
import { inventoryDecider, type InventoryCommand, type InventoryEvent } from '../../commands/oms/inventory.ts';
import { orderDecider, type OrderCommand, type OrderEvent } from '../../commands/oms/order.ts';
import type { ValidationIssueRaised, ValidationIssueResolved } from '../../commands/quality/validation-issue.ts';
import type { Command, Decider, Event, RecordedEvent } from '../../ledger/message.ts';
import { withPooledConnection } from '../../ledger/database.ts';
import { holdingWrites } from '../../ledger/held-writes.ts';
import { projectionContext, type Projection } from '../../ledger/projection.ts';
import { inProjectionTransaction, openProjectionTestDatabase, type ProjectionTestDatabase } from '../support/projection-transaction.ts';
import { auditProjection } from '../../projections/audit/audit-projection.ts';
import { catalogProjection } from '../../projections/catalog/catalog-projection.ts';
import { pushProjection } from '../../projections/integrations/push-projection.ts';
import { omsProjection } from '../../projections/oms/oms-projection.ts';
import { validationProjection } from '../../projections/validation/validation-projection.ts';
import { metadata } from '../support/command-metadata.ts';
import { placeOrderCommand } from '../support/place-order-command.ts';

/**
 * A projection leaves the same rows whatever the batches its events come in: the same events, into two fresh schemas,
 * as one-event batches into the one (as the runner applies a failed group, to name a poison event) and in groups into
 * the other, then every table compared.
 */
let db: Knex;
let pool: pg.Pool;
let database: ProjectionTestDatabase | undefined;
const tenantId = randomUUID();
const orgId = randomUUID();
let offset = 0;

type TestEvent =
  | ProductEvent
  | TaxonomyEvent
  | BrandEvent
  | ValidationIssueRaised
  | ValidationIssueResolved
  | BulkItemsProcessed
  | OrderEvent
  | InventoryEvent
  | ConnectionEvent
  | ProductPushEvent
  | ItemPushEvent;

const recorded = (event: TestEvent, aggregateId: string = randomUUID()): RecordedEvent => ({
  ...event,
  envelope: {
    eventId: randomUUID(),
    eventType: event.type,
    aggregateId,
    tenantId,
    orgId,
    actor: { userId: randomUUID(), email: 'b@example.com', ip: '10.0.0.2' },
    occurredAt: 1_700_000_000_000 + offset,
    correlationId: 'c',
    causationId: randomUUID(),
    schemaVersion: 1,
  },
  position: { topic: 'catalog.product.events.v1', partition: 0, offset: String(offset++) },
});

const [kept, churned, recreated, templated, lateTemplated, untouched] = [
  randomUUID(),
  randomUUID(),
  randomUUID(),
  randomUUID(),
  randomUUID(),
  randomUUID(),
];
const [template, attribute, variantA, variantB, variantC] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
const created = (productId: string, extra: Partial<Extract<ProductEvent, { type: 'ProductCreated' }>['data']> = {}) =>
  recorded({ type: 'ProductCreated', data: { productId, title: 'Lamp', description: null, category: null, status: 'ACTIVE', ...extra } });

/** What the tables hold before the group: stored rows the batch must read back and fold into. */
const before: RecordedEvent[] = [
  created(kept, { description: 'A lamp', sku: 'K-1' }),
  recorded({
    type: 'VariantAdded',
    data: { productId: kept, variantId: variantA, sku: 'K-1a', barcode: null, price: null, currency: null },
  }),
  created(untouched, { templateId: template, attributes: { [attribute]: 'red' } }),
  created(recreated),
  recorded({
    type: 'VariantAdded',
    data: { productId: recreated, variantId: variantC, sku: null, barcode: null, price: '1.00', currency: 'EUR' },
  }),
];

/** The group: several products, one created, updated and deleted within it, a template arriving after its products. */
const group: RecordedEvent[] = [
  recorded({
    type: 'ProductUpdated',
    data: {
      productId: kept,
      changes: [
        { field: 'title', previous: 'Lamp', current: 'Desk lamp' },
        { field: 'brand', previous: null, current: 'Acme' },
      ],
      attributeChanges: [{ attributeId: attribute, previous: null, current: 'blue' }],
    },
  }),
  recorded({
    type: 'VariantAdded',
    data: { productId: kept, variantId: variantB, sku: 'K-1b', barcode: '4006381333931', price: '9.90', currency: 'EUR' },
  }),
  recorded({
    type: 'MediaAdded',
    data: { productId: kept, mediaId: randomUUID(), variantId: null, url: 'https://x.test/a.png', altText: null, sortOrder: 0 },
  }),
  created(churned, { category: 'home' }),
  recorded({ type: 'ProductUpdated', data: { productId: churned, changes: [{ field: 'description', previous: null, current: 'Churn' }] } }),
  recorded({ type: 'ProductUpdated', data: { productId: kept, changes: [{ field: 'status', previous: 'ACTIVE', current: 'DRAFT' }] } }),
  recorded({ type: 'ProductUpdated', data: { productId: churned, changes: [{ field: 'status', previous: 'ACTIVE', current: 'DRAFT' }] } }),
  recorded({
    type: 'VariantAdded',
    data: { productId: churned, variantId: randomUUID(), sku: null, barcode: null, price: '2.00', currency: 'EUR' },
  }),
  recorded({
    type: 'MediaAdded',
    data: { productId: churned, mediaId: randomUUID(), variantId: null, url: 'https://x.test/c.png', altText: 'c', sortOrder: 1 },
  }),
  recorded({ type: 'ProductDeleted', data: { productId: churned, variantIds: [] } }),
  recorded({ type: 'ProductDeleted', data: { productId: recreated, variantIds: [variantC] } }),
  created(recreated, { title: 'Reborn', brand: 'Acme' }),
  recorded({
    type: 'VariantAdded',
    data: { productId: recreated, variantId: variantC, sku: 'again', barcode: null, price: null, currency: null },
  }),
  created(templated, { templateId: template, attributes: { [attribute]: 'green' } }),
  recorded({
    type: 'ProductUpdated',
    data: { productId: lateTemplated, changes: [{ field: 'title', previous: 'x', current: 'never created' }] },
  }),
  recorded({ type: 'BrandCreated', data: { brandId: randomUUID(), name: 'Acme', description: null, logoUrl: null } }),
  recorded({
    type: 'AttributeCreated',
    data: { taxonomyId: tenantId, attributeId: attribute, name: 'Colour', slug: 'colour', type: 'TEXT', options: [] },
  }),
  recorded({
    type: 'TemplateCreated',
    data: {
      taxonomyId: tenantId,
      templateId: template,
      name: 'Lamp',
      description: null,
      categoryId: null,
      attributeGroupIds: [],
      requiredAttributeIds: [attribute],
    },
  }),
  created(lateTemplated),
  recorded({
    type: 'ProductUpdated',
    data: { productId: lateTemplated, changes: [{ field: 'templateId', previous: null, current: template }] },
  }),
  // Redelivered within the group: the first of each id stays.
  created(kept, { title: 'Duplicate' }),
];

const [issueA, issueB, issueC, issueD] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
const raised = (issueId: string, message: string) =>
  recorded({
    type: 'ValidationIssueRaised',
    data: { qualityId: kept, issueId, productId: kept, issueType: 'MISSING_DESCRIPTION', severity: 'WARNING', message },
  });
const resolved = (issueId: string) => recorded({ type: 'ValidationIssueResolved', data: { qualityId: kept, issueId, productId: kept } });

/** Issues raised before the group, then raised again, resolved and reopened within it; one resolved that never was. */
const issuesBefore = [raised(issueA, 'a'), raised(issueB, 'b')];
const issuesGroup = [
  resolved(issueA),
  raised(issueA, 'a again'),
  resolved(issueB),
  raised(issueC, 'c'),
  resolved(issueC),
  raised(issueC, 'c again'),
  resolved(issueC),
  resolved(issueD),
];

/** Each command decided against the state the accepted ones build; every one must be accepted. */
function decided<C extends Command, E extends Event, S>(decider: Decider<C, E, S>, commands: Omit<C, 'metadata'>[]): E[] {
  let state = decider.initialState();
  return commands.flatMap((command) => {
    const events = decider.decide({ ...command, metadata } as C, state);
    state = events.reduce(decider.evolve, state);
    return events;
  });
}

const inventoryId = randomUUID();
const [location, stocked, shipped] = [randomUUID(), randomUUID(), randomUUID()];
const [orderBefore, orderShipped, orderRejected] = [randomUUID(), randomUUID(), randomUUID()];
const reservation = (orderId: string, variantId: string, quantity: number) => ({
  inventoryId,
  orderId,
  lines: [{ lineIndex: 0, variantId, locationId: location, quantity }],
});
const inventoryEvents = decided<InventoryCommand, InventoryEvent, ReturnType<typeof inventoryDecider.initialState>>(inventoryDecider, [
  { type: 'CreateStockLocation', data: { inventoryId, locationId: location, name: 'Main' } },
  { type: 'SetStockLevel', data: { inventoryId, variantId: stocked, locationId: location, available: 10 } },
  { type: 'ReserveStock', data: reservation(orderBefore, stocked, 2) },
  // the group: reserve, adjust, release, reserve and ship, and a level that only moves
  { type: 'ReserveStock', data: reservation(orderShipped, stocked, 3) },
  { type: 'AdjustStockLevel', data: { inventoryId, variantId: stocked, locationId: location, delta: 4 } },
  { type: 'ReleaseStock', data: reservation(orderBefore, stocked, 2) },
  { type: 'SetStockLevel', data: { inventoryId, variantId: shipped, locationId: location, available: 5 } },
  { type: 'ReserveStock', data: reservation(orderShipped, shipped, 5) },
  { type: 'ShipStock', data: reservation(orderShipped, shipped, 5) },
]).map((event) => recorded(event, inventoryId));
const orderEvents = (orderId: string, commands: Omit<OrderCommand, 'metadata'>[]) =>
  decided<OrderCommand, OrderEvent, ReturnType<typeof orderDecider.initialState>>(orderDecider, commands).map((event) =>
    recorded(event, orderId),
  );
const line = {
  name: 'Cup',
  quantity: 1,
  unitPrice: '2.50',
  variantId: null,
  locationId: null,
  sku: null,
  variantLabel: null,
  requiresShipment: true,
};
const placeOrder = (orderId: string) => placeOrderCommand({ orderId, lines: [line], tags: ['gift'] });
const ordersBefore = orderEvents(orderBefore, [placeOrder(orderBefore), { type: 'ConfirmOrder', data: { orderId: orderBefore } }]);
const ordersGroup = [
  ...orderEvents(orderShipped, [
    placeOrder(orderShipped),
    { type: 'ConfirmOrder', data: { orderId: orderShipped } },
    { type: 'RequestOrderStatus', data: { orderId: orderShipped, status: 'processing' } },
    { type: 'RequestOrderStatus', data: { orderId: orderShipped, status: 'delivered' } },
    { type: 'RequestOrderStatus', data: { orderId: orderShipped, status: 'shipped' } },
  ]),
  ...orderEvents(orderRejected, [
    placeOrder(orderRejected),
    { type: 'RejectOrder', data: { orderId: orderRejected, reason: 'insufficient_stock', message: 'none left', lineIndex: 0 } },
  ]),
  recorded(
    { type: 'OrderStatusChanged', data: { orderId: orderBefore, from: 'confirmed', to: 'cancelled', reservationLines: [] } },
    orderBefore,
  ),
];
const omsBefore = [...inventoryEvents.slice(0, 3), ...ordersBefore];
const omsGroup = [...inventoryEvents.slice(3), ...ordersGroup];

const freshSchema = (projection: Projection) => database!.freshSchema('t_batch', projection);

const inGroups = (projection: Projection, schema: string, events: RecordedEvent[], size: number) =>
  inProjectionTransaction({ db, pool }, schema, async (context) => {
    const handled = events.filter((event) => projection.canHandle.includes(event.type));
    for (let start = 0; start < handled.length; start += size) await projection.handle(handled.slice(start, start + size), context);
  });

const eventByEvent = (projection: Projection, schema: string, events: RecordedEvent[]) => inGroups(projection, schema, events, 1);

const tables: Record<string, string[]> = {
  catalog: ['products', 'variants', 'media', 'categories', 'attributes', 'attribute_groups', 'templates', 'brands'],
  audit: ['audit_events'],
  validation: ['validation_issues'],
  oms: ['orders', 'order_status_history', 'stock_reservations', 'stock_locations', 'stock_levels'],
  push: ['connections', 'webhooks', 'products', 'items'],
};

async function contents(projection: Projection, schema: string): Promise<Record<string, unknown[]>> {
  const all = await Promise.all(
    (tables[projection.name] ?? []).map(async (table) => {
      const rows: Record<string, unknown>[] = await db(`${schema}.${table}`).select();
      // Some tables have no id: rows in the order of their text.
      return [table, rows.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))];
    }),
  );
  return Object.fromEntries(all);
}

beforeAll(async () => {
  database = await openProjectionTestDatabase();
  ({ db, pool } = database);
});
afterAll(() => database?.close());

describe.each([catalogProjection, auditProjection, validationProjection, omsProjection])(
  'the $name projection applied in batches',
  (projection) => {
    it.each([1, 4, 100])('leaves the rows it leaves as one-event batches (batches of %i)', async (size) => {
      const perEvent = await freshSchema(projection);
      const batched = await freshSchema(projection);
      await eventByEvent(projection, perEvent, [...before, ...issuesBefore, ...omsBefore, ...group, ...issuesGroup, ...omsGroup]);
      await eventByEvent(projection, batched, [...before, ...issuesBefore, ...omsBefore]);
      await inGroups(projection, batched, [...group, ...issuesGroup, ...omsGroup], size);

      const expected = await contents(projection, perEvent);
      expect(await contents(projection, batched)).toEqual(expected);
      expect(Object.values(expected).some((rows) => rows.length > 0)).toBe(true);
    });
  },
);

describe('the catalog projection', () => {
  it('scores products in memory as the rows say', async () => {
    const schema = await freshSchema(catalogProjection);
    await inGroups(catalogProjection, schema, [...before, ...group], 100);
    const scores = Object.fromEntries(
      (await db(`${schema}.products`).select('id', 'quality_score')).map((row: { id: string; quality_score: number }) => [
        row.id,
        row.quality_score,
      ]),
    );
    // title 10 + description 20 + brand 10 + media 10 + priced variant 15 + every barcode valid 10
    expect(scores[kept]).toBe(75);
    // title 10 + the template's required attribute filled 10, the template arriving after the product
    expect(scores[templated]).toBe(20);
    expect(scores[untouched]).toBe(20);
    // linked to the template, without the attribute
    expect(scores[lateTemplated]).toBe(10);
    expect(scores[churned]).toBeUndefined();
    // title 10 + brand 10; the variant it had before its deletion is gone and the one added again has no price
    expect(scores[recreated]).toBe(20);
    const statuses = await db(`${schema}.products`).whereIn('id', [kept, untouched]).select('id', 'status');
    expect(Object.fromEntries(statuses.map((row: { id: string; status: string }) => [row.id, row.status]))).toEqual({
      [kept]: 'DRAFT',
      [untouched]: 'ACTIVE',
    });
  });
});

/** Bulk jobs' slices: their failed items (with and without a product) become issues among the quality ones. */
const [jobOne, jobTwo, jobThree] = [randomUUID(), randomUUID(), randomUUID()];
const [bulkProductA, bulkProductB] = [randomUUID(), randomUUID()];
const [issueE, issueF, issueG] = [randomUUID(), randomUUID(), randomUUID()];
const itemFailed = (index: number, code: string, productId: string | null = null): BulkItemFailure => ({
  index,
  code,
  message: `item ${index} is refused`,
  productId,
});
const slice = (jobId: string, firstIndex: number, count: number, failures: BulkItemFailure[]) =>
  recorded({ type: 'BulkItemsProcessed', data: { jobId, firstIndex, count, succeeded: count - failures.length, failures } }, jobId);
const jobOneFirst = slice(jobOne, 0, 4, [itemFailed(1, 'PRODUCT_NOT_FOUND', bulkProductA), itemFailed(2, 'MISSING_TITLE')]);
const jobOneSecond = slice(jobOne, 4, 4, [
  itemFailed(4, 'INVALID_FIELD', bulkProductB),
  itemFailed(6, 'INVALID_FIELD'),
  itemFailed(7, 'CONFLICT', bulkProductA),
]);
const bulkBefore = [...issuesBefore, jobOneFirst, raised(issueE, 'e')];
const bulkGroup = [
  resolved(issueA),
  jobOneSecond,
  raised(issueE, 'e again'),
  slice(jobTwo, 0, 2, []),
  // redelivered: a slice of the stored rows, and one of the group itself
  jobOneFirst,
  resolved(issueE),
  slice(jobTwo, 2, 3, [itemFailed(3, 'MISSING_TITLE'), itemFailed(4, 'PRODUCT_NOT_FOUND', bulkProductB)]),
  raised(issueF, 'f'),
  slice(jobThree, 0, 1, [itemFailed(0, 'INVALID_FIELD')]),
  resolved(issueF),
  jobOneSecond,
  raised(issueA, 'a again'),
  raised(issueF, 'f again'),
  resolved(issueG),
  resolved(issueB),
  slice(jobThree, 1, 1, []),
];

describe("the validation projection with bulk jobs' failed items", () => {
  it.each([1, 2, 3, 5, 100])('leaves the rows it leaves as one-event batches (batches of %i)', async (size) => {
    const perEvent = await freshSchema(validationProjection);
    const batched = await freshSchema(validationProjection);
    await eventByEvent(validationProjection, perEvent, [...bulkBefore, ...bulkGroup]);
    await eventByEvent(validationProjection, batched, bulkBefore);
    await inGroups(validationProjection, batched, bulkGroup, size);

    const expected = await contents(validationProjection, perEvent);
    expect(await contents(validationProjection, batched)).toEqual(expected);
    type Row = { issue_type: string; bulk_job_id: string | null; item_index: number | null; product_id: string | null; resolved: boolean };
    const rows = expected.validation_issues as Row[];
    const bulk = rows
      .filter((row) => row.issue_type === 'BULK_ITEM_FAILED')
      .map((row) => [row.bulk_job_id, row.item_index, row.product_id, row.resolved]);
    expect(bulk).toHaveLength(8);
    expect(bulk).toEqual(
      expect.arrayContaining([
        [jobOne, 1, bulkProductA, false],
        [jobOne, 2, null, false],
        [jobOne, 4, bulkProductB, false],
        [jobOne, 6, null, false],
        [jobOne, 7, bulkProductA, false],
        [jobTwo, 3, null, false],
        [jobTwo, 4, bulkProductB, false],
        [jobThree, 0, null, false],
      ]),
    );
    expect(rows.filter((row) => row.issue_type !== 'BULK_ITEM_FAILED')).toHaveLength(4);
  });
});

/** The push queue's events, each of a tenant: none, one or two of whose connections are active in the group. */
const [noneTenant, oneTenant, twoTenant] = [randomUUID(), randomUUID(), randomUUID()];
const of = (tenant: string, event: TestEvent): RecordedEvent => {
  const record = recorded(event);
  return { ...record, envelope: { ...record.envelope, tenantId: tenant } };
};
const [gone, one, oneLeft, twoA, twoB, lateNone] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
const saved = (tenant: string, connectionId: string) =>
  of(tenant, {
    type: 'ConnectionSaved',
    data: { connectionId, unifiedConnectionId: `u-${connectionId}`, provider: 'shopify', category: 'commerce' },
  });
const [pNone, pOne, pTwo, pRecreated, qNone, qOne, qTwo, rTwo, ghost] = [
  randomUUID(),
  randomUUID(),
  randomUUID(),
  randomUUID(),
  randomUUID(),
  randomUUID(),
  randomUUID(),
  randomUUID(),
  randomUUID(),
];
const pushCreated = (tenant: string, productId: string) =>
  of(tenant, { type: 'ProductCreated', data: { productId, title: 'Lamp', description: null, category: null, status: 'ACTIVE' } });
const pushUpdated = (tenant: string, productId: string) =>
  of(tenant, { type: 'ProductUpdated', data: { productId, changes: [{ field: 'title', previous: 'a', current: 'b' }] } });
const pushDeleted = (tenant: string, productId: string) => of(tenant, { type: 'ProductDeleted', data: { productId, variantIds: [] } });
const target = (connectionId: string, productId: string, action: 'UPSERT' | 'DELETE', seq: number) => ({
  itemPushId: itemPushIdOf(connectionId, productId),
  connectionId,
  productId,
  action,
  seq,
});

const pushBefore: RecordedEvent[] = [
  saved(noneTenant, gone),
  saved(oneTenant, one),
  saved(oneTenant, oneLeft),
  saved(twoTenant, twoA),
  saved(twoTenant, twoB),
  pushCreated(noneTenant, pNone),
  pushCreated(oneTenant, pOne),
  pushCreated(twoTenant, pTwo),
  pushCreated(twoTenant, pRecreated),
  of(noneTenant, { type: 'ConnectionDisconnected', data: { connectionId: gone } }),
  of(oneTenant, { type: 'ConnectionAuthFailed', data: { connectionId: oneLeft, reason: 'revoked' } }),
];

/** Runs of product events of all three tenants, cut by connection events, explicit requests and outcomes. */
const pushGroup: RecordedEvent[] = [
  pushCreated(noneTenant, qNone),
  pushUpdated(noneTenant, pNone),
  pushCreated(oneTenant, qOne),
  pushUpdated(oneTenant, qOne),
  pushUpdated(oneTenant, pOne),
  // its item on the failed connection is asked to delete too
  pushDeleted(oneTenant, pOne),
  pushCreated(twoTenant, qTwo),
  of(twoTenant, {
    type: 'VariantAdded',
    data: { productId: qTwo, variantId: randomUUID(), sku: null, barcode: null, price: '1.00', currency: 'EUR' },
  }),
  of(twoTenant, {
    type: 'MediaAdded',
    data: { productId: qTwo, mediaId: randomUUID(), variantId: null, url: 'https://x.test/q.png', altText: null, sortOrder: 0 },
  }),
  pushUpdated(twoTenant, qTwo.toUpperCase()),
  pushDeleted(twoTenant, pRecreated),
  pushCreated(twoTenant, pRecreated),
  pushUpdated(twoTenant, pRecreated),
  pushDeleted(twoTenant, ghost),
  pushDeleted(twoTenant, rTwo),
  of(twoTenant, {
    type: 'ItemPushed',
    data: { ...target(twoA, qTwo, 'UPSERT', 1), remoteId: 'r-1', attempt: 1, created: true, variants: [] },
  }),
  // an outcome read before the request it answers
  of(twoTenant, {
    type: 'ItemPushed',
    data: { ...target(twoA, rTwo, 'UPSERT', 2), remoteId: 'r-2', attempt: 1, created: true, variants: [] },
  }),
  pushCreated(twoTenant, rTwo),
  pushUpdated(twoTenant, pTwo),
  of(twoTenant, {
    type: 'ItemPushFailed',
    data: {
      ...target(twoB, pTwo, 'UPSERT', 1),
      attempt: 3,
      reason: 'boom',
      httpStatus: 500,
      retryable: false,
      retryAt: null,
      deadLettered: true,
    },
  }),
  of(twoTenant, { type: 'ItemPushRedriven', data: { itemPushId: itemPushIdOf(twoB, pTwo), connectionId: twoB, productId: pTwo } }),
  of(twoTenant, { type: 'ConnectionAuthFailed', data: { connectionId: twoB, reason: 'revoked' } }),
  pushUpdated(twoTenant, pTwo),
  of(twoTenant, {
    type: 'ConnectionWebhookSubscribed',
    data: { connectionId: twoA, subscriptionId: 's-1', objectType: 'accounting_order', event: 'created' },
  }),
  of(twoTenant, { type: 'ConnectionDefaultLocationSet', data: { connectionId: twoA, locationId: null } }),
  of(twoTenant, { type: 'ProductPushRequested', data: { productId: qTwo, action: 'UPSERT' } }),
  of(twoTenant, { type: 'ProductPushRequested', data: { productId: pRecreated, action: 'DELETE' } }),
  pushUpdated(twoTenant, pRecreated),
  // the tenant without connections gets one again: its initial sync, then changes pushed to it
  saved(noneTenant, gone),
  pushUpdated(noneTenant, qNone),
  pushCreated(noneTenant, lateNone),
  of(noneTenant, { type: 'ConnectionDisconnected', data: { connectionId: gone } }),
  pushUpdated(noneTenant, lateNone),
  pushDeleted(noneTenant, qNone),
  saved(twoTenant, twoB),
  pushUpdated(twoTenant, qTwo),
  pushUpdated(oneTenant, qOne),
];

describe('the push projection applied in batches', () => {
  it.each([1, 3, 7, 100])('leaves the rows it leaves as one-event batches (batches of %i)', async (size) => {
    const perEvent = await freshSchema(pushProjection);
    const batched = await freshSchema(pushProjection);
    await eventByEvent(pushProjection, perEvent, [...pushBefore, ...pushGroup]);
    await eventByEvent(pushProjection, batched, pushBefore);
    await inGroups(pushProjection, batched, pushGroup, size);

    const expected = await contents(pushProjection, perEvent);
    expect(await contents(pushProjection, batched)).toEqual(expected);
    const requests = (expected.items as { desired_seq: string }[]).map((item) => Number(item.desired_seq));
    expect(Math.max(...requests)).toBeGreaterThan(2);
  });

  it('costs a few statements for a run of product events, none per event', async () => {
    const schema = await freshSchema(pushProjection);
    await eventByEvent(pushProjection, schema, pushBefore);
    const productIds = Array.from({ length: 200 }, () => randomUUID());
    const run = productIds.flatMap((productId, i) => {
      const tenant = i % 2 ? noneTenant : twoTenant;
      return [pushCreated(tenant, productId), pushUpdated(tenant, productId)];
    });
    const statements = await inProjectionTransaction({ db, pool }, schema, async (context) => {
      const query = vi.spyOn(context.sql, 'query');
      await pushProjection.handle([...run, pushDeleted(twoTenant, pTwo)], context);
      return query.mock.calls.length;
    });
    expect(statements).toBeLessThanOrEqual(5);
    const items = await db(`${schema}.items`).whereIn('product_id', productIds.slice(0, 1));
    expect(items.map((item: { desired_seq: string }) => Number(item.desired_seq))).toEqual([2, 2]);
  });
});

describe('the oms projection applied in batches', () => {
  it("holds every write of a group of orders' and stock events for the runner's commit: no round trip of its own", async () => {
    const [perEvent, held] = [await freshSchema(omsProjection), await freshSchema(omsProjection)];
    await eventByEvent(omsProjection, perEvent, [...omsBefore, ...omsGroup]);
    await eventByEvent(omsProjection, held, omsBefore);
    const sent = await withPooledConnection(pool, async (sql) => {
      await sql.query('begin');
      const holding = holdingWrites(sql);
      // A pooled connection may be spied on already (an earlier test's): only this batch's calls count.
      const query = vi.spyOn(sql, 'query');
      query.mockClear();
      await omsProjection.handle(omsGroup, projectionContext(db, holding.sql, held));
      const calls = query.mock.calls.length;
      query.mockRestore();
      await sql.query([...holding.take(), 'commit'].join(';\n'));
      return calls;
    });
    expect(sent).toBe(0);
    expect(await contents(omsProjection, held)).toEqual(await contents(omsProjection, perEvent));
  });
});
