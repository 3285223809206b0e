import type { BrandEvent } from '../../commands/catalog/brand.ts';
import type { ProductEvent } from '../../commands/catalog/product.ts';
import type { TaxonomyEvent } from '../../commands/catalog/taxonomy.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { projectionOf, type EventHandlers, type Projection, type ProjectionContext } from '../../ledger/projection.ts';
import { topics } from '../../ledger/topics.ts';
import { auditMigrations } from './audit-migrations.ts';

/** `action` is spelled `<entity>.<past-tense verb>` in dotted lower case, e.g. `product.created`. */
type AuditEntry = { action: string; entityType: string; entityId: string; details: Record<string, unknown> };

type AuditedEvent = ProductEvent | TaxonomyEvent | BrandEvent;

/** Details use the API's snake_case field names: parentId → parent_id. */
const snakeKeys = (fields: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(fields).map(([key, value]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), value]));

/** The event's row: who did what to which record, and where the event sits in the log. */
const record = (event: RecordedEvent, { table }: ProjectionContext, entry: AuditEntry) =>
  table('audit_events')
    .insert({
      id: event.envelope.eventId,
      tenant_id: event.envelope.tenantId,
      org_id: event.envelope.orgId,
      actor_email: event.envelope.actor.email,
      action: entry.action,
      entity_type: entry.entityType,
      entity_id: entry.entityId,
      details: JSON.stringify(entry.details),
      ip_address: event.envelope.actor.ip,
      created_at: new Date(event.envelope.occurredAt),
      log_topic: event.position.topic,
      log_partition: event.position.partition,
      log_offset: event.position.offset,
    })
    .onConflict('id')
    .ignore();

/** A record created: `entityType` names it, `id` its own id, the other fields are the details. */
const created = (event: RecordedEvent, context: ProjectionContext, entityType: string, id: string, fields: Record<string, unknown>) =>
  record(event, context, { action: `${entityType}.created`, entityType, entityId: id, details: snakeKeys(fields) });

const handlers: EventHandlers<AuditedEvent> = {
  ProductCreated: (event, context) => {
    // The template's requirements are the template's business, not what the user wrote.
    const { productId, templateRequiredAttributeIds: _requirements, ...fields } = event.data;
    return created(event, context, 'product', productId, fields);
  },
  ProductUpdated: (event, context) =>
    record(event, context, {
      action: 'product.updated',
      entityType: 'product',
      entityId: event.data.productId,
      details: {
        changes: snakeKeys(Object.fromEntries(event.data.changes.map((c) => [c.field, { from: c.previous, to: c.current }]))),
        // Attribute values, by attribute id, only when some changed.
        ...(event.data.attributeChanges?.length
          ? { attributes: Object.fromEntries(event.data.attributeChanges.map((c) => [c.attributeId, { from: c.previous, to: c.current }])) }
          : {}),
      },
    }),
  ProductDeleted: (event, context) =>
    record(event, context, { action: 'product.deleted', entityType: 'product', entityId: event.data.productId, details: { variant_ids: event.data.variantIds } }),
  VariantAdded: (event, context) => {
    const { variantId, productId, ...fields } = event.data;
    return record(event, context, { action: 'variant.created', entityType: 'variant', entityId: variantId, details: { product_id: productId, ...fields } });
  },
  MediaAdded: (event, context) => {
    const { mediaId, ...fields } = event.data;
    return created(event, context, 'media', mediaId, fields);
  },
  CategoryCreated: (event, context) => {
    const { taxonomyId: _t, categoryId, ...fields } = event.data;
    return created(event, context, 'category', categoryId, fields);
  },
  AttributeCreated: (event, context) => {
    const { taxonomyId: _t, attributeId, ...fields } = event.data;
    return created(event, context, 'attribute', attributeId, fields);
  },
  AttributeGroupCreated: (event, context) => {
    const { taxonomyId: _t, attributeGroupId, ...fields } = event.data;
    return created(event, context, 'attribute_group', attributeGroupId, fields);
  },
  TemplateCreated: (event, context) => {
    const { taxonomyId: _t, templateId, ...fields } = event.data;
    return created(event, context, 'template', templateId, fields);
  },
  BrandCreated: (event, context) => {
    const { brandId, ...fields } = event.data;
    return created(event, context, 'brand', brandId, fields);
  },
};

/** The immutable audit trail: one row per catalog event, never updated or deleted. */
export const auditProjection: Projection = projectionOf({
  name: 'audit',
  topics: [topics.productEvents, topics.taxonomyEvents, topics.brandEvents],
  migrations: auditMigrations,
  handlers,
});
