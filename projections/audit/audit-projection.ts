import type { ProductEvent } from '../../commands/catalog/product.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import type { Projection } from '../../ledger/projection.ts';
import { topics } from '../../ledger/topics.ts';
import { auditMigrations } from './audit-migrations.ts';

type AuditEntry = { action: string; entityType: string; entityId: string; details: Record<string, unknown> };

/** Actions are spelled `<entity>.<past-tense verb>` in dotted lower case, e.g. `product.created`. */
const describe = (event: ProductEvent): AuditEntry => {
  switch (event.type) {
    case 'ProductCreated': {
      const { productId, ...fields } = event.data;
      return { action: 'product.created', entityType: 'product', entityId: productId, details: fields };
    }
    case 'ProductUpdated':
      return {
        action: 'product.updated',
        entityType: 'product',
        entityId: event.data.productId,
        details: { changes: Object.fromEntries(event.data.changes.map((c) => [c.field, { from: c.previous, to: c.current }])) },
      };
    case 'ProductDeleted':
      return { action: 'product.deleted', entityType: 'product', entityId: event.data.productId, details: { variant_ids: event.data.variantIds } };
    case 'VariantAdded': {
      const { variantId, productId, ...fields } = event.data;
      return { action: 'variant.created', entityType: 'variant', entityId: variantId, details: { product_id: productId, ...fields } };
    }
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

/** The immutable audit trail: one row per catalog event, never updated or deleted. */
export const auditProjection: Projection = {
  name: 'audit',
  topics: [topics.productEvents],
  migrations: auditMigrations,
  canHandle: ['ProductCreated', 'ProductUpdated', 'ProductDeleted', 'VariantAdded'],
  evolve: async (event: RecordedEvent, { table }) => {
    const entry = describe(event as unknown as ProductEvent);
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
