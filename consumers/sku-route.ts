import { skuUses, type ProductQualityEvent } from '../commands/quality/product-quality.ts';
import { skuUsageIdOf, type CountSkuUses } from '../commands/quality/sku-usage.ts';
import type { EventRoute, RoutedCommand } from '../ledger/event-router.ts';
import { topics } from '../ledger/topics.ts';

/**
 * Duplicate SKUs: each product quality assessment tells every SKU the product uses, or has just released,
 * how many times the product uses it now.
 */
export const skuRoute: EventRoute = {
  name: 'sku',
  topics: [topics.productQualityEvents],
  route: (recorded) => {
    const event = { type: recorded.type, data: recorded.data } as ProductQualityEvent;
    if (event.type !== 'ProductQualityAssessed') return [];
    const { tenantId, orgId } = recorded.envelope;
    const uses = skuUses(event.data);
    return [...new Set([...event.data.releasedSkus, ...uses])].map((sku): RoutedCommand => {
      const skuUsageId = skuUsageIdOf(tenantId, orgId, sku);
      const data: CountSkuUses['data'] = { skuUsageId, sku, productId: event.data.productId, uses: uses.filter((s) => s === sku).length };
      return { topic: topics.skuUsageCommands, aggregateId: skuUsageId, command: { type: 'CountSkuUses', data } };
    });
  },
};
