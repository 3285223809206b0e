import type { FieldChange, ProductEvent } from '../../commands/catalog/product.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import type { Projection, ProjectionContext } from '../../ledger/projection.ts';
import { topics } from '../../ledger/topics.ts';
import { catalogMigrations } from './catalog-migrations.ts';

type Recorded<T extends ProductEvent['type']> = RecordedEvent<Extract<ProductEvent, { type: T }>>;

const at = (event: RecordedEvent) => new Date(event.envelope.occurredAt);

const handlers: { [T in ProductEvent['type']]: (event: Recorded<T>, context: ProjectionContext) => Promise<unknown> } = {
  ProductCreated: (event, { table }) =>
    table('products')
      .insert({
        id: event.data.productId,
        tenant_id: event.envelope.tenantId,
        org_id: event.envelope.orgId,
        title: event.data.title,
        description: event.data.description,
        category: event.data.category,
        status: event.data.status,
        created_at: at(event),
        updated_at: at(event),
      })
      .onConflict('id')
      .ignore(),
  ProductUpdated: (event, { table }) =>
    table('products')
      .where({ id: event.data.productId })
      .update({
        ...Object.fromEntries(event.data.changes.map((change: FieldChange) => [change.field, change.current])),
        updated_at: at(event),
      }),
  ProductDeleted: async (event, { table }) => {
    await table('variants').where({ product_id: event.data.productId }).delete();
    await table('products').where({ id: event.data.productId }).delete();
  },
  VariantAdded: (event, { table }) =>
    table('variants')
      .insert({
        id: event.data.variantId,
        product_id: event.data.productId,
        tenant_id: event.envelope.tenantId,
        org_id: event.envelope.orgId,
        sku: event.data.sku,
        barcode: event.data.barcode,
        price: event.data.price,
        currency: event.data.currency,
        created_at: at(event),
      })
      .onConflict('id')
      .ignore(),
};

/** Products and their variants, as GET /api/v1/pim/products and the catalog statistics read them. */
export const catalogProjection: Projection = {
  name: 'catalog',
  topics: [topics.productEvents],
  migrations: catalogMigrations,
  canHandle: Object.keys(handlers),
  evolve: async (event, context) => {
    const handler = handlers[event.type as ProductEvent['type']] as (e: RecordedEvent, c: ProjectionContext) => Promise<unknown>;
    await handler(event, context);
  },
};
