import { productFields, type ProductEvent, type ProductField } from '../catalog/product.ts';
import { filledAttributeIds, isBlank, type ProductFacts, type VariantFacts } from './quality-score.ts';

/**
 * What a product's data means for its quality: the one source of its quality facts. The product's quality
 * aggregate keeps them event by event (`factsAfter`); the catalog projection reads them from its rows
 * (`factsOfRecord`). test/unit/product-facts.unit.spec.ts drives the same histories through both.
 */

/** What each product field tells the score: a new product field must say here what it counts for. */
const factOfField: { [F in ProductField]: (value: string | null) => Partial<ProductFacts> } = {
  // Every product has a title, so its points depend on no fact.
  title: () => ({}),
  description: (description) => ({ hasDescription: !isBlank(description) }),
  category: (category) => ({ hasCategory: !isBlank(category) }),
  brand: (brand) => ({ hasBrand: !isBlank(brand) }),
  sku: (sku) => ({ sku }),
  templateId: (templateId) => ({ templateId }),
  // ACTIVE or DRAFT says whether the product is published, not how complete its data is.
  status: () => ({}),
};

/** The facts of no product: what the assessment of a deleted product carries. */
export const noFacts: ProductFacts = {
  sku: null,
  hasDescription: false,
  hasCategory: false,
  hasBrand: false,
  hasMedia: false,
  variants: [],
  templateId: null,
  filledAttributeIds: [],
};

export type VariantRecord = { variantId: string; sku: string | null; barcode: string | null; price: string | null };

/** A product as its record holds it; a field absent (from events older than it) is null. */
export type ProductRecord = Partial<Record<ProductField, string | null>> & {
  attributes: Record<string, string | null>;
  variants: VariantRecord[];
  hasMedia: boolean;
};

const variantFacts = ({ variantId, sku, barcode, price }: VariantRecord): VariantFacts => ({
  variantId,
  sku,
  barcode,
  priced: price !== null,
});

const withFields = (facts: ProductFacts, changes: readonly { field: ProductField; current: string | null }[]): ProductFacts => {
  // One copy, changed in place: a spread per field made this a hot spot of every product write.
  const next = { ...facts };
  for (const { field, current } of changes) Object.assign(next, factOfField[field](current));
  return next;
};

/** A product's facts from its record, as the catalog projection scores it. */
export const factsOfRecord = (record: ProductRecord): ProductFacts => ({
  ...withFields(
    noFacts,
    productFields.map((field) => ({ field, current: record[field] ?? null })),
  ),
  hasMedia: record.hasMedia,
  variants: record.variants.map(variantFacts),
  filledAttributeIds: filledAttributeIds(record.attributes),
});

/** A product's facts after one of its events; undefined once it is gone (or if the event is about a product never seen). */
export const factsAfter = (change: ProductEvent, before: ProductFacts | undefined): ProductFacts | undefined => {
  switch (change.type) {
    case 'ProductCreated':
      return factsOfRecord({ ...change.data, attributes: change.data.attributes ?? {}, variants: [], hasMedia: false });
    case 'ProductUpdated': {
      if (!before) return undefined;
      const filled = new Set(before.filledAttributeIds);
      for (const { attributeId, current } of change.data.attributeChanges ?? []) {
        if (isBlank(current)) filled.delete(attributeId);
        else filled.add(attributeId);
      }
      return { ...withFields(before, change.data.changes), filledAttributeIds: [...filled] };
    }
    case 'VariantAdded': {
      if (!before) return undefined;
      const others = before.variants.filter((v) => v.variantId !== change.data.variantId);
      return { ...before, variants: [...others, variantFacts(change.data)] };
    }
    case 'MediaAdded':
      return before && { ...before, hasMedia: true };
    case 'ProductDeleted':
      return undefined;
    default: {
      const exhaustive: never = change;
      return exhaustive;
    }
  }
};

/**
 * The required attributes of the product's template after one of its events: they come with the link to a
 * template (templates never change), so the quality aggregate needs no read of the taxonomy.
 */
export const requirementsAfter = (change: ProductEvent, before: string[] | null): string[] | null => {
  if (change.type === 'ProductCreated') return change.data.templateId ? (change.data.templateRequiredAttributeIds ?? null) : null;
  if (change.type !== 'ProductUpdated') return before;
  const relinked = change.data.changes.find((c) => c.field === 'templateId');
  if (!relinked) return before;
  return relinked.current === null ? null : (change.data.templateRequiredAttributeIds ?? null);
};
