import { createHmac } from 'node:crypto';
import * as shared from '@unified-api/typescript-sdk/sdk/models/shared';
import { describe, expect, it } from 'vitest';
import { platformProductOf, variantReference } from '../../consumers/integrations/commerce-item.ts';
import { ORDER_WEBHOOKS } from '../../consumers/integrations/push-worker.ts';
import { nativeDeliverySignature, nativeEventKind, verifiesNative } from '../../http/unified-native-delivery.ts';
import { ITEM_FIELDS, VARIANT_FIELDS, WEBHOOK_EVENTS, WEBHOOK_OBJECT_TYPES } from '../../stack/unified/published-shapes.ts';
import { modelProblem } from '../support/unified-contract.ts';

/** What we take from Unified.to's SDK (@unified-api/typescript-sdk), held to the SDK itself. */
const fieldsOf = (schema: unknown): string[] => {
  const inner = (schema as { _def: { schema: { shape: Record<string, unknown> } } })._def.schema;
  return Object.keys(inner.shape).filter((key) => !['id', 'created_at', 'updated_at'].includes(key));
};
const item = { inbound: shared.CommerceItem$inboundSchema, outbound: shared.CommerceItem$outboundSchema };
const variant = { inbound: shared.CommerceItemvariant$inboundSchema, outbound: shared.CommerceItemvariant$outboundSchema };

describe("the stand-in's copy of the published shapes", () => {
  it('keeps exactly the writable fields of CommerceItem and CommerceItemvariant', () => {
    expect([...ITEM_FIELDS].sort()).toEqual(fieldsOf(shared.CommerceItem$inboundSchema).sort());
    expect([...VARIANT_FIELDS].sort()).toEqual(fieldsOf(shared.CommerceItemvariant$inboundSchema).sort());
  });

  it('accepts exactly the SDK’s WebhookObjectType and WebhookEvent values; ours are among them', () => {
    expect([...WEBHOOK_OBJECT_TYPES].sort()).toEqual(Object.values(shared.WebhookObjectType).sort());
    expect([...WEBHOOK_EVENTS].sort()).toEqual(Object.values(shared.WebhookEvent).sort());
    for (const hook of ORDER_WEBHOOKS) {
      expect(WEBHOOK_OBJECT_TYPES).toContain(hook.object_type);
      expect(WEBHOOK_EVENTS).toContain(hook.event);
    }
  });
});

describe('a product as the platform takes it', () => {
  const product = {
    id: '0b6f4c3e-2d1a-4f5e-9c8b-7a6d5e4f3c2b',
    title: 'Mug',
    description: null,
    category: 'kitchen',
    sku: 'MUG',
    brand: null,
    status: 'DRAFT',
  };
  const media = [{ product_id: product.id, url: 'https://cdn.example/m.jpg', alt_text: null }];

  it('is an SDK CommerceItem (no nulls, no variants inside) and SDK itemvariants with their prices and references', () => {
    const variants = [
      { id: 'v-1', product_id: product.id, sku: 'MUG-RED', price: '12.50', currency: 'EUR' },
      { id: 'v-2', product_id: product.id, sku: null, price: null, currency: null },
    ];
    const pushed = platformProductOf(product, variants, media);
    expect(modelProblem(item, pushed.item)).toBeUndefined();
    expect(pushed.item).toEqual({
      name: 'Mug',
      is_active: false,
      tags: ['kitchen'],
      metadata: [{ slug: 'commerce_ledger_ref', value: `cl:${product.id}` }],
      media: [{ url: 'https://cdn.example/m.jpg', position: 0 }],
      prices: [{ price: 12.5, currency: 'EUR' }],
    });
    expect(pushed.variants.map((v) => v.variantId)).toEqual(['v-1', 'v-2']);
    for (const v of pushed.variants) expect(modelProblem(variant, { ...v.body, items: [{ id: 'item_1' }] })).toBeUndefined();
    expect(pushed.variants[0]?.body).toMatchObject({ sku: 'MUG-RED', prices: [{ price: 12.5, currency: 'EUR' }] });
    expect(pushed.variants[0]?.body.metadata).toEqual([{ slug: 'commerce_ledger_ref', value: variantReference(product.id, 'v-1') }]);
    expect(pushed.variants[1]?.body).not.toHaveProperty('sku');
  });

  it('without variants: one default itemvariant carrying the product SKU, or none without a SKU', () => {
    expect(platformProductOf(product, [], []).variants).toEqual([
      { variantId: 'default', body: expect.objectContaining({ sku: 'MUG', prices: [] }) },
    ]);
    expect(platformProductOf({ ...product, sku: null }, [], []).variants).toEqual([]);
  });

  it('the contract check itself catches a null, a field the model lacks and a wrong type', () => {
    expect(modelProblem(item, { name: 'x', description: null })).toMatch(/does not parse/);
    expect(modelProblem(item, { name: 'x', variants: [] })).toMatch(/is not the SDK's model/);
    expect(modelProblem(variant, { prices: [{ price: '1' }] })).toMatch(/does not parse/);
  });
});

describe("Unified's native delivery signature", () => {
  const data = [{ id: 'ord-1', total_amount: 10 }];
  it('is the HMAC-SHA256 of data as JSON then the nonce, with the workspace secret, taken in base64 or hex', () => {
    const expected = createHmac('sha256', 'ws-secret').update('[{"id":"ord-1","total_amount":10}]n-1').digest();
    expect(nativeDeliverySignature('ws-secret', data, 'n-1')).toBe(expected.toString('base64'));
    expect(verifiesNative('ws-secret', data, 'n-1', expected.toString('base64'))).toBe(true);
    expect(verifiesNative('ws-secret', data, 'n-1', expected.toString('hex'))).toBe(true);
  });

  it('fails for another secret, nonce, data or a truncated signature', () => {
    const sig = nativeDeliverySignature('ws-secret', data, 'n-1');
    expect(verifiesNative('other', data, 'n-1', sig)).toBe(false);
    expect(verifiesNative('ws-secret', data, 'n-2', sig)).toBe(false);
    expect(verifiesNative('ws-secret', [{ id: 'ord-2', total_amount: 10 }], 'n-1', sig)).toBe(false);
    expect(verifiesNative('ws-secret', data, 'n-1', sig.slice(0, 20))).toBe(false);
    expect(verifiesNative('ws-secret', data, 'n-1', '')).toBe(false);
  });

  it('names the inbox event by object type and event', () => {
    expect(nativeEventKind('accounting_order', 'created')).toBe('accounting.order.created');
    expect(nativeEventKind('commerce_itemvariant', 'deleted')).toBe('commerce.itemvariant.deleted');
  });
});
