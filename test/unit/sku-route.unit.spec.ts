import { describe, expect, it } from 'vitest';
import type { ProductQualityAssessed } from '../../commands/quality/product-quality.ts';
import { skuUsageIdOf } from '../../commands/quality/sku-usage.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { skuRoute } from '../../consumers/sku-route.ts';

const envelope = {
  eventId: 'e1',
  eventType: 'ProductQualityAssessed',
  aggregateId: 'p',
  tenantId: 't1',
  orgId: 'o1',
  actor: { userId: 'u1', email: 'a@example.com', ip: '127.0.0.1' },
  occurredAt: 0,
  correlationId: 'r1',
  causationId: 'c1',
  schemaVersion: 1,
};

const assessed = (data: Partial<ProductQualityAssessed['data']>): RecordedEvent => ({
  type: 'ProductQualityAssessed',
  data: {
    qualityId: 'p',
    productId: 'p',
    deleted: false,
    score: 10,
    releasedSkus: [],
    requiredAttributeIds: null,
    sku: null,
    hasDescription: false,
    hasCategory: false,
    hasBrand: false,
    hasMedia: false,
    variants: [],
    templateId: null,
    filledAttributeIds: [],
    ...data,
  },
  envelope,
  position: { topic: 'quality.product.events.v1', partition: 0, offset: '0' },
});
const variant = (variantId: string, sku: string) => ({ variantId, sku, barcode: null, priced: false });

describe('sku route', () => {
  it('tells every SKU the product uses, or released, how many times the product uses it now', () => {
    const routed = skuRoute.route(assessed({ sku: 'A', variants: [variant('v1', 'B'), variant('v2', 'A')], releasedSkus: ['OLD'] }));
    expect(routed.map((r) => [r.aggregateId, r.command.data])).toEqual(
      [
        ['OLD', 0],
        ['A', 2],
        ['B', 1],
      ].map(([sku, uses]) => {
        const skuUsageId = skuUsageIdOf('t1', 'o1', sku as string);
        return [skuUsageId, { skuUsageId, sku, productId: 'p', uses }];
      }),
    );
    expect(new Set(routed.map((r) => r.topic.name))).toEqual(new Set(['quality.sku.commands.v1']));
  });

  it('routes nothing for a product without SKUs, or for issue events', () => {
    expect(skuRoute.route(assessed({}))).toEqual([]);
    expect(
      skuRoute.route({ ...assessed({}), type: 'ValidationIssueResolved', data: { qualityId: 'p', issueId: 'i', productId: 'p' } }),
    ).toEqual([]);
  });
});
