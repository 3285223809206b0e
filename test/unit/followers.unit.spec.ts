import { describe, expect, it } from 'vitest';
import { productAggregate, type ProductEvent } from '../../commands/catalog/product.ts';
import { aggregates } from '../../commands/index.ts';
import { assessmentsOf, productQualityAggregate } from '../../commands/quality/product-quality.ts';
import { leadersOf } from '../../ledger/aggregate.ts';

describe('aggregates decided in their leader transaction', () => {
  it("run the product's quality in the product processor: no processor of its own, its topics still declared", () => {
    const leaders = leadersOf(aggregates).map((aggregate) => aggregate.name);
    expect(leaders).toContain('product');
    expect(leaders).not.toContain('product-quality');
    const product = aggregates.find((aggregate) => aggregate.name === 'product');
    expect(product?.followers?.map((follower) => follower.aggregate.name)).toEqual(['product-quality']);
    expect(aggregates.map((aggregate) => aggregate.name)).toContain('product-quality');
  });

  it('keys the follower like its leader, so both live on the same partition', () => {
    expect(productQualityAggregate.commands.key).toBe(productAggregate.commands.key);
    expect(productQualityAggregate.events.key).toBe(productAggregate.events.key);
    expect(productQualityAggregate.state.key).toBe(productAggregate.state.key);
  });

  it("asks the product's quality to judge each catalog change of the product", () => {
    const deleted: ProductEvent = { type: 'ProductDeleted', data: { productId: 'p-1', variantIds: [] } };
    expect(assessmentsOf(deleted)).toEqual([{ type: 'AssessCatalogChange', data: { productId: 'p-1', change: deleted } }]);
  });
});
