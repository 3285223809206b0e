import { productDecider, type Product, type ProductCommand, type ProductEvent } from '../commands/catalog/product.ts';
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

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const aggregates: AggregateDefinition<any, any, any>[] = [productAggregate];
