import type { SomeAggregate } from '../ledger/aggregate.ts';
import { brandAggregate } from './catalog/brand.ts';
import { productAggregate } from './catalog/product.ts';
import { taxonomyAggregate } from './catalog/taxonomy.ts';
import { inventoryAggregate } from './oms/inventory.ts';
import { orderAggregate } from './oms/order.ts';
import { productQualityAggregate } from './quality/product-quality.ts';
import { skuUsageAggregate } from './quality/sku-usage.ts';

/** Every aggregate type, each run by its own single writer; this order is the event catalog's (docs/asyncapi.json). */
export const aggregates: readonly SomeAggregate[] = [
  productAggregate,
  taxonomyAggregate,
  brandAggregate,
  productQualityAggregate,
  skuUsageAggregate,
  orderAggregate,
  inventoryAggregate,
];
