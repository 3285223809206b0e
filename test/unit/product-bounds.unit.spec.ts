import { describe, expect, it } from 'vitest';
import { MAX_SORT_ORDER, productDecider, type ProductCommand, type ProductEvent } from '../../commands/catalog/product.ts';
import { ValidationError } from '../../ledger/errors.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(productDecider);

const productId = '44444444-4444-4444-8444-444444444444';

const created: ProductEvent = {
  type: 'ProductCreated',
  data: { productId, title: 'Mug', description: null, category: null, status: 'ACTIVE' },
};
const media = (sortOrder: number): WithoutMetadata<ProductCommand> => ({
  type: 'AddMedia',
  data: { productId, mediaId: `m${sortOrder}`, variantId: null, url: 'https://cdn.example.com/m.png', altText: null, sortOrder },
});
const variant = (price: string | null): WithoutMetadata<ProductCommand> => ({
  type: 'AddVariant',
  data: { productId, variantId: 'v1', sku: null, barcode: null, price, currency: 'USD' },
});

describe('product decider bounds', () => {
  it(`takes media sort orders of -${MAX_SORT_ORDER}..${MAX_SORT_ORDER} (an Avro int and an integer column)`, () => {
    for (const sortOrder of [-MAX_SORT_ORDER, 0, MAX_SORT_ORDER]) expect(given([created]).when(media(sortOrder)).events()).toHaveLength(1);
    for (const sortOrder of [MAX_SORT_ORDER + 1, -MAX_SORT_ORDER - 1, 2 ** 31, 1.5, Number.NaN]) {
      given([created]).when(media(sortOrder)).thenThrows(ValidationError);
    }
  });

  it('takes variant prices of 0 ≤ price < 10^12 with at most 6 places, or none', () => {
    for (const price of [null, '0.00', '19.99', '5', '999999999999.999999'])
      expect(given([created]).when(variant(price)).events(), String(price)).toHaveLength(1);
    for (const price of ['1000000000000.00', '-1.00', '1.1234567', '1e3', '', 'free']) {
      given([created]).when(variant(price)).thenThrows(ValidationError);
    }
  });
});
