import { brandAggregate, type BrandEvent } from '../../commands/catalog/brand.ts';
import { productAggregate, type ProductEvent } from '../../commands/catalog/product.ts';
import { taxonomyAggregate, type TaxonomyEvent } from '../../commands/catalog/taxonomy.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { mappedTypes, mapperOf, projection, type EventMappers, type Projection } from '../../ledger/projection.ts';
import { firstOfEachId, insertRows } from '../record-set.ts';
import { auditMigrations } from './audit-migrations.ts';

/** `action` is spelled `<entity>.<past-tense verb>` in dotted lower case, e.g. `product.created`. */
type AuditEntry = { action: string; entityType: string; entityId: string; details: Record<string, unknown> };

type AuditedEvent = ProductEvent | TaxonomyEvent | BrandEvent;

/** Details use the API's snake_case field names: parentId → parent_id. */
const snakeKeys = (fields: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(fields).map(([key, value]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), value]));

/** A record created: `idField` holds its id; its other fields, less those `hidden`, are the details. */
const created = <K extends PropertyKey, D extends Record<K, string>>(
  event: { data: D },
  entityType: string,
  idField: K,
  ...hidden: (keyof D)[]
): AuditEntry => {
  const omitted = new Set<PropertyKey>([idField, ...hidden]);
  const fields = Object.fromEntries(Object.entries(event.data).filter(([key]) => !omitted.has(key)));
  return { action: `${entityType}.created`, entityType, entityId: event.data[idField], details: snakeKeys(fields) };
};

const entries: EventMappers<AuditedEvent, AuditEntry> = {
  // The template's requirements are the template's business, not what the user wrote.
  ProductCreated: (event) => created(event, 'product', 'productId', 'templateRequiredAttributeIds'),
  ProductUpdated: (event) => ({
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
  ProductDeleted: (event) => ({
    action: 'product.deleted',
    entityType: 'product',
    entityId: event.data.productId,
    details: { variant_ids: event.data.variantIds },
  }),
  VariantAdded: (event) => created(event, 'variant', 'variantId'),
  MediaAdded: (event) => created(event, 'media', 'mediaId'),
  CategoryCreated: (event) => created(event, 'category', 'categoryId', 'taxonomyId'),
  AttributeCreated: (event) => created(event, 'attribute', 'attributeId', 'taxonomyId'),
  AttributeGroupCreated: (event) => created(event, 'attribute_group', 'attributeGroupId', 'taxonomyId'),
  TemplateCreated: (event) => created(event, 'template', 'templateId', 'taxonomyId'),
  BrandCreated: (event) => created(event, 'brand', 'brandId'),
};

const entryOf = mapperOf(entries);

/** The event's row: who did what to which record, and where the event sits in the log. */
const rowOf = (event: RecordedEvent<AuditedEvent>) => {
  const entry = entryOf(event);
  return {
    id: event.envelope.eventId,
    tenant_id: event.envelope.tenantId,
    org_id: event.envelope.orgId,
    actor_email: event.envelope.actor.email,
    action: entry.action,
    entity_type: entry.entityType,
    entity_id: entry.entityId,
    details: entry.details,
    ip_address: event.envelope.actor.ip,
    created_at: new Date(event.envelope.occurredAt),
    log_topic: event.position.topic,
    log_partition: event.position.partition,
    log_offset: event.position.offset,
  };
};

/** The immutable audit trail: one row per catalog event, never updated or deleted. */
export const auditProjection: Projection = projection<AuditedEvent>({
  name: 'audit',
  runner: 'product-writes',
  topics: [productAggregate.events, taxonomyAggregate.events, brandAggregate.events],
  migrations: auditMigrations,
  canHandle: mappedTypes(entries),
  handle: (events, { sql, schema }) =>
    insertRows(sql, schema, 'audit_events', firstOfEachId(events.map(rowOf)), 'on conflict (id) do nothing'),
});
