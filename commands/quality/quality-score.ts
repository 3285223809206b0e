import { isValidGtin } from './gtin.ts';

/** What counts as absent text: null, empty or only whitespace. */
export const isBlank = (text: string | null): boolean => text === null || text.trim() === '';

export type VariantFacts = { variantId: string; sku: string | null; barcode: string | null; priced: boolean };
export type ProductFacts = {
  sku: string | null;
  hasDescription: boolean;
  hasCategory: boolean;
  hasBrand: boolean;
  hasMedia: boolean;
  variants: VariantFacts[];
};

/**
 * The one rule set behind a product's quality score (0..100); docs/decisions.md explains each weight.
 * A template's required attributes are part of the rule set, but products carry no attribute values
 * yet, so that rule earns nothing until they do.
 */
export const QUALITY_RULES = {
  title: 10,
  description: 20,
  category: 15,
  brand: 10,
  media: 10,
  pricedVariant: 15,
  validBarcodes: 10,
  templateAttributes: 10,
} as const;

/** Below this a product is flagged LOW_QUALITY_SCORE. */
export const LOW_QUALITY_THRESHOLD = 40;

export const qualityScore = (facts: ProductFacts): number => {
  const barcodes = facts.variants.flatMap((v) => (v.barcode === null ? [] : [v.barcode]));
  const earned = [
    QUALITY_RULES.title, // a product always has a title
    facts.hasDescription ? QUALITY_RULES.description : 0,
    facts.hasCategory ? QUALITY_RULES.category : 0,
    facts.hasBrand ? QUALITY_RULES.brand : 0,
    facts.hasMedia ? QUALITY_RULES.media : 0,
    facts.variants.some((v) => v.priced) ? QUALITY_RULES.pricedVariant : 0,
    barcodes.length > 0 && barcodes.every(isValidGtin) ? QUALITY_RULES.validBarcodes : 0,
  ];
  return earned.reduce((a, b) => a + b, 0);
};
