import { describe, expect, it } from 'vitest';
import { decide, evolve, initialState, type ProductCommand, type ProductEvent } from '../../commands/catalog/product.ts';
import { ConflictError, NotFoundError } from '../../ledger/errors.ts';
import { metadata } from '../support/command-metadata.ts';

const productId = '11111111-1111-4111-8111-111111111111';

const given = (...events: ProductEvent[]) => ({
  when: (command: Omit<ProductCommand, 'metadata'>) => () => decide({ ...command, metadata } as ProductCommand, events.reduce(evolve, initialState())),
});

const created: ProductEvent = {
  type: 'ProductCreated',
  data: { productId, title: 'Mug', description: null, category: 'kitchen', status: 'ACTIVE' },
};

describe('product decider', () => {
  it('creates an ACTIVE product', () => {
    const events = given().when({ type: 'CreateProduct', data: { productId, title: 'Mug', description: null, category: 'kitchen' } })();
    expect(events).toEqual([created]);
  });

  it('refuses to create the same product twice', () => {
    expect(given(created).when({ type: 'CreateProduct', data: { productId, title: 'Mug', description: null, category: null } })).toThrow(ConflictError);
  });

  it('records only the fields that change, with their previous values', () => {
    const events = given(created).when({ type: 'UpdateProduct', data: { productId, title: 'Big mug', category: 'kitchen', description: 'Holds 500 ml' } })();
    expect(events).toEqual([
      {
        type: 'ProductUpdated',
        data: {
          productId,
          changes: [
            { field: 'title', previous: 'Mug', current: 'Big mug' },
            { field: 'description', previous: null, current: 'Holds 500 ml' },
          ],
        },
      },
    ]);
  });

  it('records nothing for an update that changes nothing', () => {
    expect(given(created).when({ type: 'UpdateProduct', data: { productId, title: 'Mug' } })()).toEqual([]);
  });

  it('clears an optional field with null', () => {
    const [event] = given(created).when({ type: 'UpdateProduct', data: { productId, category: null } })();
    expect(event).toEqual({ type: 'ProductUpdated', data: { productId, changes: [{ field: 'category', previous: 'kitchen', current: null }] } });
  });

  it('refuses to update, delete or add a variant to a product that does not exist', () => {
    expect(given().when({ type: 'UpdateProduct', data: { productId, title: 'x' } })).toThrow(NotFoundError);
    expect(given().when({ type: 'DeleteProduct', data: { productId } })).toThrow(NotFoundError);
    const variant = { productId, variantId: 'v1', sku: null, barcode: null, price: '1.00', currency: 'USD' };
    expect(given().when({ type: 'AddVariant', data: variant })).toThrow(NotFoundError);
  });

  it('deletes a product together with its variants, once', () => {
    const variantAdded: ProductEvent = {
      type: 'VariantAdded',
      data: { productId, variantId: 'v1', sku: 'MUG-1', barcode: null, price: '19.99', currency: 'USD' },
    };
    expect(given(created, variantAdded).when({ type: 'DeleteProduct', data: { productId } })()).toEqual([
      { type: 'ProductDeleted', data: { productId, variantIds: ['v1'] } },
    ]);
    const deleted: ProductEvent = { type: 'ProductDeleted', data: { productId, variantIds: ['v1'] } };
    expect(given(created, variantAdded, deleted).when({ type: 'DeleteProduct', data: { productId } })).toThrow(NotFoundError);
    expect(given(created, deleted).when({ type: 'CreateProduct', data: { productId, title: 'Mug', description: null, category: null } })).toThrow(
      ConflictError,
    );
  });

  it('adds a variant with its exact price and refuses a duplicate variant id', () => {
    const data = { productId, variantId: 'v1', sku: 'MUG-1', barcode: '4006381333931', price: '19.99', currency: 'EUR' };
    const events = given(created).when({ type: 'AddVariant', data })();
    expect(events).toEqual([{ type: 'VariantAdded', data }]);
    expect(given(created, ...events).when({ type: 'AddVariant', data })).toThrow(ConflictError);
  });

  it('carries sku, brand and template, and records their changes', () => {
    const data = { productId, title: 'Mug', description: null, category: null, sku: 'MUG', brand: 'Acme', templateId: 't1' };
    const [withExtras] = given().when({ type: 'CreateProduct', data })();
    expect(withExtras).toEqual({ type: 'ProductCreated', data: { ...data, status: 'ACTIVE' } });
    expect(given(withExtras as ProductEvent).when({ type: 'UpdateProduct', data: { productId, brand: null, sku: 'MUG' } })()).toEqual([
      { type: 'ProductUpdated', data: { productId, changes: [{ field: 'brand', previous: 'Acme', current: null }] } },
    ]);
  });

  it('attaches media to the product or one of its own variants', () => {
    const variantAdded: ProductEvent = { type: 'VariantAdded', data: { productId, variantId: 'v1', sku: null, barcode: null, price: null, currency: null } };
    const media = { productId, mediaId: 'm1', variantId: 'v1', url: 'https://cdn.example.com/a.png', altText: null, sortOrder: 0 };
    const events = given(created, variantAdded).when({ type: 'AddMedia', data: media })();
    expect(events).toEqual([{ type: 'MediaAdded', data: media }]);
    expect(given(created, variantAdded, ...events).when({ type: 'AddMedia', data: media })).toThrow(ConflictError);
    expect(given(created).when({ type: 'AddMedia', data: media })).toThrow(NotFoundError);
    expect(given().when({ type: 'AddMedia', data: { ...media, variantId: null } })).toThrow(NotFoundError);
  });

  it('carries attribute values, sets and removes them by attribute id, and records only real changes', () => {
    const data = { productId, title: 'Mug', description: null, category: null, attributes: { a1: '12.5', a2: 'red' } };
    const [withValues] = given().when({ type: 'CreateProduct', data })();
    expect(withValues).toEqual({ type: 'ProductCreated', data: { ...data, status: 'ACTIVE' } });
    const events = given(withValues as ProductEvent).when({ type: 'UpdateProduct', data: { productId, attributes: { a1: '12.5', a2: null, a3: 'stoneware' } } })();
    expect(events).toEqual([
      {
        type: 'ProductUpdated',
        data: {
          productId,
          changes: [],
          attributeChanges: [
            { attributeId: 'a2', previous: 'red', current: null },
            { attributeId: 'a3', previous: null, current: 'stoneware' },
          ],
        },
      },
    ]);
    const state = [withValues as ProductEvent, ...events].reduce(evolve, initialState());
    expect(state).toMatchObject({ status: 'Existing', attributes: { a1: '12.5', a3: 'stoneware' } });
    expect(state.status === 'Existing' && Object.keys(state.attributes).sort()).toEqual(['a1', 'a3']);
    // Setting the same values, or removing one never set, changes nothing.
    expect(given(withValues as ProductEvent).when({ type: 'UpdateProduct', data: { productId, attributes: { a1: '12.5', a9: null } } })()).toEqual([]);
  });

  it('reads events from before attribute values as carrying none', () => {
    expect(evolve(initialState(), created)).toMatchObject({ attributes: {} });
    const updated: ProductEvent = { type: 'ProductUpdated', data: { productId, changes: [{ field: 'title', previous: 'Mug', current: 'Cup' }] } };
    expect([created, updated].reduce(evolve, initialState())).toMatchObject({ title: 'Cup', attributes: {} });
  });
});
