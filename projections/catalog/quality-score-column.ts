import { factsOfRecord, type VariantRecord } from '../../commands/quality/product-facts.ts';
import { qualityScore } from '../../commands/quality/quality-score.ts';
import type { ProjectionContext } from '../../ledger/projection.ts';

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

/** The score of a product as its rows hold it: the one computation both the event-by-event and the batch form use. */
export function scoreOfRows({ product, variants, hasMedia, requiredAttributeIds }: ScoredProduct): number {
  const { template_id: templateId, attributes, sku, description, category, brand } = product;
  const facts = factsOfRecord({ sku, description, category, brand, templateId, attributes, variants, hasMedia });
  return qualityScore(facts, requiredAttributeIds);
}

/**
 * Recomputes a product's quality score from its rows, in the same transaction as the event that changed
 * them, so the score is on the product record as soon as the write returns and a replay recomputes it.
 */
export async function refreshQualityScore({ table }: ProjectionContext, productId: string): Promise<void> {
  const product: ScoredProductRow | undefined = await table('products')
    .where({ id: productId })
    .first('sku', 'description', 'category', 'brand', 'template_id', 'attributes');
  if (!product) return;
  const variants: { id: string; sku: string | null; barcode: string | null; price: string | null }[] = await table('variants')
    .where({ product_id: productId })
    .select('id', 'sku', 'barcode', 'price');
  const media: { id: string } | undefined = await table('media').where({ product_id: productId }).first('id');
  const template: { required_attribute_ids: string[] } | undefined = product.template_id
    ? await table('templates').where({ id: product.template_id }).first('required_attribute_ids')
    : undefined;
  const score = scoreOfRows({
    product,
    variants: variants.map(({ id, ...variant }) => ({ variantId: id, ...variant })),
    hasMedia: media !== undefined,
    requiredAttributeIds: template?.required_attribute_ids,
  });
  await table('products').where({ id: productId }).update({ quality_score: score });
}

/** Recomputes the scores of a template's products, which depend on its required attributes. */
export async function refreshTemplateScores(context: ProjectionContext, templateId: string): Promise<void> {
  const products: { id: string }[] = await context.table('products').where({ template_id: templateId }).select('id');
  for (const { id } of products) await refreshQualityScore(context, id);
}
