import { factsOfRecord, type VariantRecord } from '../../commands/quality/product-facts.ts';
import { qualityScore } from '../../commands/quality/quality-score.ts';

/** The product columns its quality depends on. */
export type ScoredProductRow = Record<'sku' | 'description' | 'category' | 'brand' | 'template_id', string | null> & {
  attributes: Record<string, string>;
};

/** What the score of a product's rows is: its row, its variants, whether it has media, its template's requirements. */
export type ScoredProduct = {
  product: ScoredProductRow;
  variants: VariantRecord[];
  hasMedia: boolean;
  /** The required attributes of its template; undefined without a template or while the template is not known. */
  requiredAttributeIds: string[] | undefined;
};

/** The score of a product as its rows hold it: as the catalog projection computes it. */
export function scoreOfRows({ product, variants, hasMedia, requiredAttributeIds }: ScoredProduct): number {
  const { template_id: templateId, attributes, sku, description, category, brand } = product;
  const facts = factsOfRecord({ sku, description, category, brand, templateId, attributes, variants, hasMedia });
  return qualityScore(facts, requiredAttributeIds);
}
