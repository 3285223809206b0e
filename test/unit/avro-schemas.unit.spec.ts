import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { loadSchema } from '../../ledger/avro-schemas.ts';

describe('loadSchema', () => {
  it('inlines the envelope and actor once, so the registry gets one self-contained schema', () => {
    const schema = loadSchema('commerce.ledger.catalog.ProductCreated');
    const text = JSON.stringify(schema);
    expect(text.match(/"name":"EventEnvelope"/g)).toHaveLength(1);
    expect(text.match(/"name":"Actor"/g)).toHaveLength(1);
    const type = avro.Type.forSchema(schema as avro.Schema);
    expect(type.name).toBe('commerce.ledger.catalog.ProductCreated');
  });

  it('round-trips an event through its Avro type', () => {
    const type = avro.Type.forSchema(loadSchema('commerce.ledger.catalog.VariantAdded') as avro.Schema);
    const event = {
      envelope: {
        eventId: 'e',
        eventType: 'VariantAdded',
        aggregateId: 'p',
        tenantId: 't',
        orgId: 'o',
        actor: { userId: 'u', email: null, ip: '127.0.0.1' },
        occurredAt: 1_700_000_000_123,
        correlationId: 'c',
        causationId: 'k',
        schemaVersion: 1,
      },
      productId: 'p',
      variantId: 'v',
      sku: 'S',
      barcode: null,
      price: '19.99',
      currency: 'USD',
    };
    expect(type.fromBuffer(type.toBuffer(event))).toEqual(event);
  });
});
