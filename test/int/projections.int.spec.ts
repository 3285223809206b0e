import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProductEvent } from '../../commands/catalog/product.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import type { Projection } from '../../ledger/projection.ts';
import { inProjectionTransaction, openProjectionTestDatabase, type ProjectionTestDatabase } from '../support/projection-transaction.ts';
import { auditProjection } from '../../projections/audit/audit-projection.ts';
import { catalogProjection } from '../../projections/catalog/catalog-projection.ts';

let db: Knex;
let pool: pg.Pool;
const tenantId = randomUUID();
const orgId = randomUUID();
const productId = randomUUID();
const variantId = randomUUID();
let offset = 0;

const recorded = (event: ProductEvent, occurredAt: number): RecordedEvent => ({
  ...event,
  envelope: {
    eventId: randomUUID(),
    eventType: event.type,
    aggregateId: productId,
    tenantId,
    orgId,
    actor: { userId: randomUUID(), email: 'p@example.com', ip: '10.0.0.1' },
    occurredAt,
    correlationId: 'c',
    causationId: randomUUID(),
    schemaVersion: 1,
  },
  position: { topic: 'catalog.product.events.v1', partition: 0, offset: String(offset++) },
});

const history: RecordedEvent[] = [
  recorded({ type: 'ProductCreated', data: { productId, title: 'Lamp', description: null, category: 'home', status: 'ACTIVE' } }, 1_000),
  recorded({ type: 'VariantAdded', data: { productId, variantId, sku: 'L-1', barcode: null, price: '49.90', currency: 'EUR' } }, 2_000),
  recorded({ type: 'ProductUpdated', data: { productId, changes: [{ field: 'title', previous: 'Lamp', current: 'Desk lamp' }] } }, 3_000),
];

/** Given events, when projected, then rows: against a real Postgres, in a schema of the test's own. */
async function project(projection: Projection, events: RecordedEvent[]): Promise<string> {
  const schema = await database!.freshSchema('t', projection);
  await inProjectionTransaction({ db, pool }, schema, (context) => projection.handle(events, context));
  return schema;
}

let database: ProjectionTestDatabase | undefined;
beforeAll(async () => {
  database = await openProjectionTestDatabase();
  ({ db, pool } = database);
});
afterAll(() => database?.close());

describe('catalog projection', () => {
  it('builds the product and its variants from their events', async () => {
    const schema = await project(catalogProjection, history);
    expect(await db(`${schema}.products`).select()).toEqual([
      {
        id: productId,
        tenant_id: tenantId,
        org_id: orgId,
        title: 'Desk lamp',
        description: null,
        category: 'home',
        sku: null,
        brand: null,
        template_id: null,
        attributes: {},
        status: 'ACTIVE',
        // title 10 + category 15 + a priced variant 15 (docs/decisions.md)
        quality_score: 40,
        created_at: new Date(1_000),
        updated_at: new Date(3_000),
      },
    ]);
    expect(await db(`${schema}.variants`).select('id', 'product_id', 'sku', 'price', 'currency')).toEqual([
      { id: variantId, product_id: productId, sku: 'L-1', price: '49.90', currency: 'EUR' },
    ]);
  });

  it('removes the product and its variants on deletion', async () => {
    const deleted = recorded({ type: 'ProductDeleted', data: { productId, variantIds: [variantId] } }, 4_000);
    const schema = await project(catalogProjection, [...history, deleted]);
    expect(await db(`${schema}.products`).count({ n: '*' })).toEqual([{ n: '0' }]);
    expect(await db(`${schema}.variants`).count({ n: '*' })).toEqual([{ n: '0' }]);
  });

  it('is idempotent for an event applied twice', async () => {
    const schema = await project(catalogProjection, [...history, history[0]!, history[1]!]);
    expect(await db(`${schema}.products`).count({ n: '*' })).toEqual([{ n: '1' }]);
    expect(await db(`${schema}.variants`).count({ n: '*' })).toEqual([{ n: '1' }]);
  });
});

describe('audit projection', () => {
  it('writes one immutable row per event with actor, action and details', async () => {
    const schema = await project(auditProjection, history);
    const rows = await db(`${schema}.audit_events`)
      .orderBy('log_offset')
      .select('action', 'entity_type', 'entity_id', 'actor_email', 'ip_address', 'details');
    expect(rows).toEqual([
      {
        action: 'product.created',
        entity_type: 'product',
        entity_id: productId,
        actor_email: 'p@example.com',
        ip_address: '10.0.0.1',
        details: { title: 'Lamp', description: null, category: 'home', status: 'ACTIVE' },
      },
      {
        action: 'variant.created',
        entity_type: 'variant',
        entity_id: variantId,
        actor_email: 'p@example.com',
        ip_address: '10.0.0.1',
        details: { product_id: productId, sku: 'L-1', barcode: null, price: '49.90', currency: 'EUR' },
      },
      {
        action: 'product.updated',
        entity_type: 'product',
        entity_id: productId,
        actor_email: 'p@example.com',
        ip_address: '10.0.0.1',
        details: { changes: { title: { from: 'Lamp', to: 'Desk lamp' } } },
      },
    ]);
  });
});
