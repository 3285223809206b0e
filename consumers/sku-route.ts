import { productQualityAggregate, skuUses, type ProductQualityEvent } from '../commands/quality/product-quality.ts';
import { skuUsageAggregate, skuUsageIdOf } from '../commands/quality/sku-usage.ts';
import { routeTo, type EventRoute } from '../ledger/event-router.ts';

/**
 * Duplicate SKUs: each product quality assessment tells every SKU the product uses, or has just released,
 * how many times the product uses it now.
 */
export const skuRoute: EventRoute = {
  name: 'sku',
  topics: [productQualityAggregate.events],
  // No request waits for SKU counts (a duplicate shows as a validation issue a moment later).
  fetch: 'batched',
  route: (recorded) => {
    const event = { type: recorded.type, data: recorded.data } as ProductQualityEvent;
    if (event.type !== 'ProductQualityAssessed') return [];
    const { tenantId, orgId } = recorded.envelope;
    const uses = skuUses(event.data);
    return [...new Set([...event.data.releasedSkus, ...uses])].map((sku) => {
      const data = {
        skuUsageId: skuUsageIdOf(tenantId, orgId, sku),
        sku,
        productId: event.data.productId,
        uses: uses.filter((s) => s === sku).length,
      };
      return routeTo(skuUsageAggregate, { type: 'CountSkuUses', data });
    });
  },
};
