import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { brandAggregate } from '../../commands/catalog/brand.ts';
import { productAggregate, productDecider } from '../../commands/catalog/product.ts';
import { aggregates } from '../../commands/index.ts';
import { inventoryAggregate } from '../../commands/oms/inventory.ts';
import { orderAggregate } from '../../commands/oms/order.ts';
import type { Execute } from '../../http/ledger-facade.ts';
import { defineAggregate } from '../../ledger/aggregate.ts';
import { routeTo } from '../../ledger/event-router.ts';

const deleteProduct = { type: 'DeleteProduct', data: { productId: 'p1' } } as const;

describe('a command is sent through its aggregate', () => {
  it("goes to that aggregate's command topic, keyed by the id its data names", () => {
    expect(routeTo(productAggregate, deleteProduct)).toEqual({
      topic: productAggregate.commands,
      aggregateId: 'p1',
      command: deleteProduct,
    });
    expect(productAggregate.aggregateIdOf(deleteProduct)).toBe('p1');
  });

  it('does not compile when sent to another aggregate', async () => {
    // @ts-expect-error DeleteProduct is a product command: the brand's single writer has no such command
    const misrouted = routeTo(brandAggregate, deleteProduct);
    // What the compile error prevents: the brand's writer would receive it, keyed by a field the command lacks.
    expect(misrouted.topic.name).toBe('catalog.brand.commands.v1');
    expect(misrouted.aggregateId).toBeUndefined();

    const sent: string[] = [];
    const execute: Execute = async (_request, aggregate, command) => {
      sent.push(`${command.type} -> ${aggregate.name}`);
      return { positions: [] };
    };
    const request = {} as FastifyRequest;
    await execute(request, productAggregate, deleteProduct);
    // @ts-expect-error ReserveStock belongs to the inventory, not to the order
    await execute(request, orderAggregate, { type: 'ReserveStock', data: { inventoryId: 'i1', orderId: 'o1', lines: [] } });
    await execute(request, inventoryAggregate, { type: 'ReserveStock', data: { inventoryId: 'i1', orderId: 'o1', lines: [] } });
    // @ts-expect-error a command's data must be its own type's: CreateBrand needs name, description and logoUrl
    await execute(request, brandAggregate, { type: 'CreateBrand', data: { brandId: 'b1' } });
    expect(sent).toEqual(['DeleteProduct -> product', 'ReserveStock -> order', 'ReserveStock -> inventory', 'CreateBrand -> brand']);
  });
});

describe('an aggregate declaration', () => {
  it('derives its topics, their key and its id function from the stream and the id field', () => {
    expect([productAggregate.commands.name, productAggregate.events.name, productAggregate.state.name]).toEqual([
      'catalog.product.commands.v1',
      'catalog.product.events.v1',
      'catalog.product.state.v1',
    ]);
    expect(productAggregate.state.compacted).toBe(true);
    expect(productAggregate.events.key).toBe('productId');
    expect(productAggregate.events.records).toContain('commerce.ledger.catalog.MediaAdded');
  });

  it('names every event type of its decider, and a field every command has as the id', () => {
    const stream = { name: 'product', stream: 's', decider: productDecider };
    // @ts-expect-error MediaAdded and three more are missing: an event the catalog misses could not be encoded
    const partial = defineAggregate({ ...stream, id: 'productId', events: { namespace: 'n', types: ['ProductCreated'] } });
    expect(partial.events.records).toEqual(['n.ProductCreated']);

    const types = ['ProductCreated', 'ProductUpdated', 'ProductDeleted', 'VariantAdded', 'MediaAdded'] as const;
    // @ts-expect-error title is not a field every product command has (DeleteProduct has only productId)
    const keyedByTitle = defineAggregate({ ...stream, id: 'title', events: { namespace: 'n', types } });
    expect(keyedByTitle.aggregateIdOf(deleteProduct)).toBeUndefined();
  });

  it('is registered once in the composition root, each under a name of its own', () => {
    const names = aggregates.map((aggregate) => aggregate.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain(productAggregate.name);
  });
});
