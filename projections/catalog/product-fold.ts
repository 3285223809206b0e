import type { ProductEvent } from '../../commands/catalog/product.ts';
import type { VariantRecord } from '../../commands/quality/product-facts.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { getOrAdd } from '../get-or-add.ts';
import { createdProduct, mediaRow, updatedColumns, variantRow, type ProductRow } from './product-rows.ts';

/** A product as the tables hold it before the batch: its row (if any), its variants, whether it has media. */
export type StoredProduct = { row: ProductRow | undefined; variants: VariantRecord[]; hasMedia: boolean };

/**
 * A product after the batch's events, folded in memory in log order as its tables would take them one by one: `row`,
 * `variants` and `hasMedia` are what its tables then hold; `cleared` says its variant and media rows from before the
 * batch are deleted (it was deleted), and the added ones are the rows still to insert after that.
 */
export type FoldedProduct = StoredProduct & {
  cleared: boolean;
  addedVariants: Map<string, ReturnType<typeof variantRow>>;
  addedMedia: Map<string, ReturnType<typeof mediaRow>>;
};

/** Postgres compares uuids whatever their case; the maps must too. */
export const idKey = (id: string): string => id.toLowerCase();

const startingFrom = (stored: StoredProduct | undefined): FoldedProduct => ({
  row: stored?.row,
  variants: [...(stored?.variants ?? [])],
  hasMedia: stored?.hasMedia ?? false,
  cleared: false,
  addedVariants: new Map(),
  addedMedia: new Map(),
});

function fold(product: FoldedProduct, event: RecordedEvent<ProductEvent>): void {
  switch (event.type) {
    case 'ProductCreated':
      // insert … on conflict do nothing: an existing row stays as it is.
      product.row ??= createdProduct(event);
      return;
    case 'ProductUpdated': {
      const row = product.row;
      if (row) product.row = { ...row, ...updatedColumns(event, () => row.attributes) };
      return;
    }
    case 'ProductDeleted':
      Object.assign(product, { row: undefined, variants: [], hasMedia: false, cleared: true });
      product.addedVariants.clear();
      product.addedMedia.clear();
      return;
    case 'VariantAdded': {
      // Variant and media ids are made within their product (randomUUID, or uuidv5 of the product and the key), so an
      // id already taken is taken by this product's own row: the insert leaves it as it is.
      const id = idKey(event.data.variantId);
      if (product.variants.some((variant) => idKey(variant.variantId) === id)) return;
      const { sku, barcode, price } = event.data;
      product.variants.push({ variantId: event.data.variantId, sku, barcode, price });
      product.addedVariants.set(id, variantRow(event));
      return;
    }
    case 'MediaAdded': {
      const id = idKey(event.data.mediaId);
      if (!product.addedMedia.has(id)) product.addedMedia.set(id, mediaRow(event));
      product.hasMedia = true;
      return;
    }
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
}

/** Each product the events name, and each product already stored, after the events (in log order). */
export function foldProducts(stored: Map<string, StoredProduct>, events: RecordedEvent<ProductEvent>[]): Map<string, FoldedProduct> {
  const folded = new Map([...stored].map(([id, product]) => [id, startingFrom(product)]));
  for (const event of events) {
    fold(
      getOrAdd(folded, idKey(event.data.productId), () => startingFrom(undefined)),
      event,
    );
  }
  return folded;
}
