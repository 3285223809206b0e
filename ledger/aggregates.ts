import { brandDecider, type Brand, type BrandCommand, type BrandEvent } from '../commands/catalog/brand.ts';
import { productDecider, type Product, type ProductCommand, type ProductEvent } from '../commands/catalog/product.ts';
import { taxonomyDecider, type Taxonomy, type TaxonomyCommand, type TaxonomyEvent } from '../commands/catalog/taxonomy.ts';
import { productQualityDecider, type ProductQuality, type ProductQualityCommand, type ProductQualityEvent } from '../commands/quality/product-quality.ts';
import { skuUsageDecider, type SkuUsage, type SkuUsageCommand, type SkuUsageEvent } from '../commands/quality/sku-usage.ts';
import { inventoryDecider, type Inventory, type InventoryCommand, type InventoryEvent } from '../commands/oms/inventory.ts';
import { orderDecider, type Order, type OrderCommand, type OrderEvent } from '../commands/oms/order.ts';
import type { AggregateDefinition } from './command-processor.ts';
import { topics } from './topics.ts';

export const productAggregate: AggregateDefinition<ProductCommand, ProductEvent, Product> = {
  name: 'product',
  commands: topics.productCommands,
  events: topics.productEvents,
  state: topics.productState,
  decider: productDecider,
  aggregateIdOf: (command) => command.data.productId,
};

/** One per tenant and org: it owns slug uniqueness and the references inside the taxonomy. */
export const taxonomyAggregate: AggregateDefinition<TaxonomyCommand, TaxonomyEvent, Taxonomy> = {
  name: 'taxonomy',
  commands: topics.taxonomyCommands,
  events: topics.taxonomyEvents,
  state: topics.taxonomyState,
  decider: taxonomyDecider,
  aggregateIdOf: (command) => command.data.taxonomyId,
};

export const brandAggregate: AggregateDefinition<BrandCommand, BrandEvent, Brand> = {
  name: 'brand',
  commands: topics.brandCommands,
  events: topics.brandEvents,
  state: topics.brandState,
  decider: brandDecider,
  aggregateIdOf: (command) => command.data.brandId,
};

/** One per product, fed by the validation router: the issues that depend on the product alone, and its score. */
export const productQualityAggregate: AggregateDefinition<ProductQualityCommand, ProductQualityEvent, ProductQuality> = {
  name: 'product-quality',
  commands: topics.productQualityCommands,
  events: topics.productQualityEvents,
  state: topics.productQualityState,
  decider: productQualityDecider,
  aggregateIdOf: (command) => command.data.productId,
};

/** One per SKU of a tenant and org, fed by the SKU router: duplicate SKUs across and within products. */
export const skuUsageAggregate: AggregateDefinition<SkuUsageCommand, SkuUsageEvent, SkuUsage> = {
  name: 'sku-usage',
  commands: topics.skuUsageCommands,
  events: topics.skuUsageEvents,
  state: topics.skuUsageState,
  decider: skuUsageDecider,
  aggregateIdOf: (command) => command.data.skuUsageId,
};

/** One order, keyed by UUIDv5 of tenant, org and idempotency key. */
export const orderAggregate: AggregateDefinition<OrderCommand, OrderEvent, Order> = {
  name: 'order',
  commands: topics.orderCommands,
  events: topics.orderEvents,
  state: topics.orderState,
  decider: orderDecider,
  aggregateIdOf: (command) => command.data.orderId,
};

/** One per tenant and org: all its stock levels, so a multi-line reservation is one decision. */
export const inventoryAggregate: AggregateDefinition<InventoryCommand, InventoryEvent, Inventory> = {
  name: 'inventory',
  commands: topics.inventoryCommands,
  events: topics.inventoryEvents,
  state: topics.inventoryState,
  decider: inventoryDecider,
  aggregateIdOf: (command) => command.data.inventoryId,
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const aggregates: AggregateDefinition<any, any, any>[] = [
  productAggregate,
  taxonomyAggregate,
  brandAggregate,
  productQualityAggregate,
  skuUsageAggregate,
  orderAggregate,
  inventoryAggregate,
];
