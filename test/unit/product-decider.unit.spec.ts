import { describe, expect, it } from 'vitest';
import { decide, evolve, initialState, productDecider, type ProductEvent } from '../../commands/catalog/product.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import { metadata } from '../support/command-metadata.ts';
import { DeciderSpecification } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(productDecider);

const productId = '11111111-1111-4111-8111-111111111111';

const created: ProductEvent = {
  type: 'ProductCreated',
  data: { productId, title: 'Mug', description: null, category: 'kitchen', status: 'ACTIVE' },
};

describe('product decider', () => {
  it('creates an ACTIVE product', () => {
    given()
      .when({ type: 'CreateProduct', data: { productId, title: 'Mug', description: null, category: 'kitchen' } })
      .then([created]);
  });

  it('refuses to create the same product twice', () => {
    given([created])
      .when({ type: 'CreateProduct', data: { productId, title: 'Mug', description: null, category: null } })
      .thenThrows(ConflictError);
  });

  it('records only the fields that change, with their previous values', () => {
    given([created])
      .when({ type: 'UpdateProduct', data: { productId, title: 'Big mug', category: 'kitchen', description: 'Holds 500 ml' } })
      .then([
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
    given([created])
      .when({ type: 'UpdateProduct', data: { productId, title: 'Mug' } })
      .thenNothingHappened();
  });

  it('clears an optional field with null', () => {
    const [event] = given([created])
      .when({ type: 'UpdateProduct', data: { productId, category: null } })
      .events();
    expect(event).toEqual({
      type: 'ProductUpdated',
      data: { productId, changes: [{ field: 'category', previous: 'kitchen', current: null }] },
    });
  });

  it('refuses to update, delete or add a variant to a product that does not exist', () => {
    given()
      .when({ type: 'UpdateProduct', data: { productId, title: 'x' } })
      .thenThrows(NotFoundError);
    given().when({ type: 'DeleteProduct', data: { productId } }).thenThrows(NotFoundError);
    const variant = { productId, variantId: 'v1', sku: null, barcode: null, price: '1.00', currency: 'USD' };
    given().when({ type: 'AddVariant', data: variant }).thenThrows(NotFoundError);
  });

  it('deletes a product together with its variants, once', () => {
    const variantAdded: ProductEvent = {
      type: 'VariantAdded',
      data: { productId, variantId: 'v1', sku: 'MUG-1', barcode: null, price: '19.99', currency: 'USD' },
    };
    const deleted: ProductEvent = { type: 'ProductDeleted', data: { productId, variantIds: ['v1'] } };
    given([created, variantAdded]).when({ type: 'DeleteProduct', data: { productId } }).then([deleted]);
    given([created, variantAdded, deleted]).when({ type: 'DeleteProduct', data: { productId } }).thenThrows(NotFoundError);
    given([created, deleted])
      .when({ type: 'CreateProduct', data: { productId, title: 'Mug', description: null, category: null } })
      .thenThrows(ConflictError);
  });

  it('adds a variant with its exact price and refuses a duplicate variant id', () => {
    const data = { productId, variantId: 'v1', sku: 'MUG-1', barcode: '4006381333931', price: '19.99', currency: 'EUR' };
    const events = given([created]).when({ type: 'AddVariant', data }).events();
    expect(events).toEqual([{ type: 'VariantAdded', data }]);
    given([created, ...events])
      .when({ type: 'AddVariant', data })
      .thenThrows(ConflictError);
  });

  it('carries sku, brand and template, and records their changes', () => {
    const data = { productId, title: 'Mug', description: null, category: null, sku: 'MUG', brand: 'Acme', templateId: 't1' };
    const [withExtras] = given().when({ type: 'CreateProduct', data }).events();
    expect(withExtras).toEqual({ type: 'ProductCreated', data: { ...data, status: 'ACTIVE' } });
    given([withExtras as ProductEvent])
      .when({ type: 'UpdateProduct', data: { productId, brand: null, sku: 'MUG' } })
      .then([{ type: 'ProductUpdated', data: { productId, changes: [{ field: 'brand', previous: 'Acme', current: null }] } }]);
  });

  it('attaches media to the product or one of its own variants', () => {
    const variantAdded: ProductEvent = {
      type: 'VariantAdded',
      data: { productId, variantId: 'v1', sku: null, barcode: null, price: null, currency: null },
    };
    const media = { productId, mediaId: 'm1', variantId: 'v1', url: 'https://cdn.example.com/a.png', altText: null, sortOrder: 0 };
    const events = given([created, variantAdded]).when({ type: 'AddMedia', data: media }).events();
    expect(events).toEqual([{ type: 'MediaAdded', data: media }]);
    given([created, variantAdded, ...events])
      .when({ type: 'AddMedia', data: media })
      .thenThrows(ConflictError);
    given([created]).when({ type: 'AddMedia', data: media }).thenThrows(NotFoundError);
    given()
      .when({ type: 'AddMedia', data: { ...media, variantId: null } })
      .thenThrows(NotFoundError);
  });

  it('carries attribute values, sets and removes them by attribute id, and records only real changes', () => {
    const data = { productId, title: 'Mug', description: null, category: null, attributes: { a1: '12.5', a2: 'red' } };
    const [withValues] = given().when({ type: 'CreateProduct', data }).events();
    expect(withValues).toEqual({ type: 'ProductCreated', data: { ...data, status: 'ACTIVE' } });
    const events = given([withValues as ProductEvent])
      .when({ type: 'UpdateProduct', data: { productId, attributes: { a1: '12.5', a2: null, a3: 'stoneware' } } })
      .events();
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
    given([withValues as ProductEvent])
      .when({ type: 'UpdateProduct', data: { productId, attributes: { a1: '12.5', a9: null } } })
      .thenNothingHappened();
  });

  it('moves a product to DRAFT and back to ACTIVE, recording nothing when the status is already the one asked for', () => {
    const drafted: ProductEvent = {
      type: 'ProductUpdated',
      data: { productId, changes: [{ field: 'status', previous: 'ACTIVE', current: 'DRAFT' }] },
    };
    given([created])
      .when({ type: 'UpdateProduct', data: { productId, status: 'DRAFT' } })
      .then([drafted]);
    expect([created, drafted].reduce(evolve, initialState())).toMatchObject({ status: 'Existing', productStatus: 'DRAFT' });
    given([created, drafted])
      .when({ type: 'UpdateProduct', data: { productId, status: 'DRAFT' } })
      .thenNothingHappened();
    given([created, drafted])
      .when({ type: 'UpdateProduct', data: { productId, status: 'ACTIVE', title: 'Cup' } })
      .then([
        {
          type: 'ProductUpdated',
          data: {
            productId,
            changes: [
              { field: 'title', previous: 'Mug', current: 'Cup' },
              { field: 'status', previous: 'DRAFT', current: 'ACTIVE' },
            ],
          },
        },
      ]);
    given([created])
      .when({ type: 'UpdateProduct', data: { productId, status: 'ACTIVE' } })
      .thenNothingHappened();
  });

  it('creates ACTIVE whatever a create command carries, and refuses a status that is neither ACTIVE nor DRAFT', () => {
    const data = { productId, title: 'Mug', description: null, category: 'kitchen', status: 'DRAFT' };
    given()
      .when({ type: 'CreateProduct', data } as never)
      .then([created]);
    given([created])
      .when({ type: 'UpdateProduct', data: { productId, status: 'ARCHIVED' } } as never)
      .thenThrows(ValidationError);
  });

  it('reads a snapshot from before DRAFT existed as ACTIVE', () => {
    const state = evolve(initialState(), created);
    if (state.status !== 'Existing') throw new Error('expected an existing product');
    const older = { ...state, productStatus: undefined } as unknown as typeof state;
    const command = { type: 'UpdateProduct' as const, data: { productId, status: 'DRAFT' as const }, metadata };
    expect(decide(command, older)).toEqual([
      { type: 'ProductUpdated', data: { productId, changes: [{ field: 'status', previous: 'ACTIVE', current: 'DRAFT' }] } },
    ]);
  });

  it('reads events from before attribute values as carrying none', () => {
    expect(evolve(initialState(), created)).toMatchObject({ attributes: {} });
    const updated: ProductEvent = {
      type: 'ProductUpdated',
      data: { productId, changes: [{ field: 'title', previous: 'Mug', current: 'Cup' }] },
    };
    expect([created, updated].reduce(evolve, initialState())).toMatchObject({ title: 'Cup', attributes: {} });
  });
});
