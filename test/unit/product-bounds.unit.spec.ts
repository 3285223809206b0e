import { describe, expect, it } from 'vitest';
import { decide, evolve, initialState, MAX_SORT_ORDER, type ProductCommand, type ProductEvent } from '../../commands/catalog/product.ts';
import { ValidationError } from '../../ledger/errors.ts';
import { metadata } from '../support/command-metadata.ts';

const productId = '44444444-4444-4444-8444-444444444444';

const given = (...events: ProductEvent[]) => ({
  when: (command: Omit<ProductCommand, 'metadata'>) => () => decide({ ...command, metadata } as ProductCommand, events.reduce(evolve, initialState())),
});

const created: ProductEvent = { type: 'ProductCreated', data: { productId, title: 'Mug', description: null, category: null, status: 'ACTIVE' } };
const media = (sortOrder: number): Omit<ProductCommand, 'metadata'> => ({
  type: 'AddMedia',
  data: { productId, mediaId: `m${sortOrder}`, variantId: null, url: 'https://cdn.example.com/m.png', altText: null, sortOrder },
});
const variant = (price: string | null): Omit<ProductCommand, 'metadata'> => ({
  type: 'AddVariant',
  data: { productId, variantId: 'v1', sku: null, barcode: null, price, currency: 'USD' },
});

describe('product decider bounds', () => {
  it(`takes media sort orders of -${MAX_SORT_ORDER}..${MAX_SORT_ORDER} (an Avro int and an integer column)`, () => {
    for (const sortOrder of [-MAX_SORT_ORDER, 0, MAX_SORT_ORDER]) expect(given(created).when(media(sortOrder))()).toHaveLength(1);
    for (const sortOrder of [MAX_SORT_ORDER + 1, -MAX_SORT_ORDER - 1, 2 ** 31, 1.5, Number.NaN]) {
      expect(given(created).when(media(sortOrder)), String(sortOrder)).toThrow(ValidationError);
    }
  });

  it('takes variant prices of 0 ≤ price < 10^12 with at most 6 places, or none', () => {
    for (const price of [null, '0.00', '19.99', '5', '999999999999.999999']) expect(given(created).when(variant(price))(), String(price)).toHaveLength(1);
    for (const price of ['1000000000000.00', '-1.00', '1.1234567', '1e3', '', 'free']) {
      expect(given(created).when(variant(price)), price).toThrow(ValidationError);
    }
  });
});
