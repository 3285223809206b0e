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
  /** The product template it follows, if any. */
  templateId: string | null;
  /** The attributes with a non-blank value on the product. */
  filledAttributeIds: string[];
};

/**
 * The one rule set behind a product's quality score (0..100); docs/decisions.md explains each weight.
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

/** The ids of the attributes a product's value object fills: those whose value is not blank. */
export const filledAttributeIds = (values: Record<string, string | null>): string[] =>
  Object.entries(values).flatMap(([id, value]) => (isBlank(value) ? [] : [id]));

/**
 * Whether the product fills every attribute its template requires. A product without a template, or whose
 * template is not known (yet), earns nothing: the points reward classifying a product and completing it.
 * A template that requires nothing is filled by every product that follows it.
 */
const fillsTemplate = (facts: ProductFacts, requiredAttributeIds: readonly string[] | undefined): boolean => {
  if (facts.templateId === null || requiredAttributeIds === undefined) return false;
  const filled = new Set(facts.filledAttributeIds);
  return requiredAttributeIds.every((id) => filled.has(id));
};

/** `requiredAttributeIds`: those of the product's template, undefined without a (known) template. */
export const qualityScore = (facts: ProductFacts, requiredAttributeIds?: readonly string[]): number => {
  const barcodes = facts.variants.flatMap((v) => (v.barcode === null ? [] : [v.barcode]));
  const earned = [
    QUALITY_RULES.title, // a product always has a title
    facts.hasDescription ? QUALITY_RULES.description : 0,
    facts.hasCategory ? QUALITY_RULES.category : 0,
    facts.hasBrand ? QUALITY_RULES.brand : 0,
    facts.hasMedia ? QUALITY_RULES.media : 0,
    facts.variants.some((v) => v.priced) ? QUALITY_RULES.pricedVariant : 0,
    barcodes.length > 0 && barcodes.every(isValidGtin) ? QUALITY_RULES.validBarcodes : 0,
    fillsTemplate(facts, requiredAttributeIds) ? QUALITY_RULES.templateAttributes : 0,
  ];
  return earned.reduce((a, b) => a + b, 0);
};
