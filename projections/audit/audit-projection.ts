import type { BrandEvent } from '../../commands/catalog/brand.ts';
import type { ProductEvent } from '../../commands/catalog/product.ts';
import type { TaxonomyEvent } from '../../commands/catalog/taxonomy.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import type { Projection } from '../../ledger/projection.ts';
import { topics } from '../../ledger/topics.ts';
import { auditMigrations } from './audit-migrations.ts';

type AuditEntry = { action: string; entityType: string; entityId: string; details: Record<string, unknown> };

type AuditedEvent = ProductEvent | TaxonomyEvent | BrandEvent;

/** Details use the API's snake_case field names: parentId → parent_id. */
const snakeKeys = (fields: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(fields).map(([key, value]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), value]));

/** Actions are spelled `<entity>.<past-tense verb>` in dotted lower case, e.g. `product.created`. */
const describe = (event: AuditedEvent): AuditEntry => {
  switch (event.type) {
    case 'ProductCreated': {
      // The template's requirements are the template's business, not what the user wrote.
      const { productId, templateRequiredAttributeIds: _requirements, ...fields } = event.data;
      return { action: 'product.created', entityType: 'product', entityId: productId, details: snakeKeys(fields) };
    }
    case 'ProductUpdated':
      return {
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
      };
    case 'ProductDeleted':
      return { action: 'product.deleted', entityType: 'product', entityId: event.data.productId, details: { variant_ids: event.data.variantIds } };
    case 'VariantAdded': {
      const { variantId, productId, ...fields } = event.data;
      return { action: 'variant.created', entityType: 'variant', entityId: variantId, details: { product_id: productId, ...fields } };
    }
    case 'MediaAdded': {
      const { mediaId, ...fields } = event.data;
      return { action: 'media.created', entityType: 'media', entityId: mediaId, details: snakeKeys(fields) };
    }
    case 'CategoryCreated': {
      const { taxonomyId: _t, categoryId, ...fields } = event.data;
      return { action: 'category.created', entityType: 'category', entityId: categoryId, details: snakeKeys(fields) };
    }
    case 'AttributeCreated': {
      const { taxonomyId: _t, attributeId, ...fields } = event.data;
      return { action: 'attribute.created', entityType: 'attribute', entityId: attributeId, details: snakeKeys(fields) };
    }
    case 'AttributeGroupCreated': {
      const { taxonomyId: _t, attributeGroupId, ...fields } = event.data;
      return { action: 'attribute_group.created', entityType: 'attribute_group', entityId: attributeGroupId, details: snakeKeys(fields) };
    }
    case 'TemplateCreated': {
      const { taxonomyId: _t, templateId, ...fields } = event.data;
      return { action: 'template.created', entityType: 'template', entityId: templateId, details: snakeKeys(fields) };
    }
    case 'BrandCreated': {
      const { brandId, ...fields } = event.data;
      return { action: 'brand.created', entityType: 'brand', entityId: brandId, details: snakeKeys(fields) };
    }
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

const audited: AuditedEvent['type'][] = [
  'ProductCreated',
  'ProductUpdated',
  'ProductDeleted',
  'VariantAdded',
  'MediaAdded',
  'CategoryCreated',
  'AttributeCreated',
  'AttributeGroupCreated',
  'TemplateCreated',
  'BrandCreated',
];

/** The immutable audit trail: one row per catalog event, never updated or deleted. */
export const auditProjection: Projection = {
  name: 'audit',
  topics: [topics.productEvents, topics.taxonomyEvents, topics.brandEvents],
  migrations: auditMigrations,
  canHandle: audited,
  evolve: async (event: RecordedEvent, { table }) => {
    const entry = describe(event as unknown as AuditedEvent);
    await table('audit_events')
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
  },
};
