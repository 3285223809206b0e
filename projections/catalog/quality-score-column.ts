import { isBlank as blank, filledAttributeIds, qualityScore } from '../../commands/quality/quality-score.ts';
import type { ProjectionContext } from '../../ledger/projection.ts';

/**
 * Recomputes a product's quality score from its rows, in the same transaction as the event that changed
 * them, so the score is on the product record as soon as the write returns and a replay recomputes it.
 */
export async function refreshQualityScore({ table }: ProjectionContext, productId: string): Promise<void> {
  const product = (await table('products').where({ id: productId }).first('sku', 'description', 'category', 'brand', 'template_id', 'attributes')) as
    | {
        sku: string | null;
        description: string | null;
        category: string | null;
        brand: string | null;
        template_id: string | null;
        attributes: Record<string, string>;
      }
    | undefined;
  if (!product) return;
  const template = product.template_id
    ? ((await table('templates').where({ id: product.template_id }).first('required_attribute_ids')) as { required_attribute_ids: string[] } | undefined)
    : undefined;
  const variants = (await table('variants').where({ product_id: productId }).select('id', 'sku', 'barcode', 'price')) as {
    id: string;
    sku: string | null;
    barcode: string | null;
    price: string | null;
  }[];
  const media = (await table('media').where({ product_id: productId }).first('id')) as { id: string } | undefined;
  const score = qualityScore({
    sku: product.sku,
    hasDescription: !blank(product.description),
    hasCategory: !blank(product.category),
    hasBrand: !blank(product.brand),
    hasMedia: media !== undefined,
    variants: variants.map((v) => ({ variantId: v.id, sku: v.sku, barcode: v.barcode, priced: v.price !== null })),
    templateId: product.template_id,
    filledAttributeIds: filledAttributeIds(product.attributes),
  }, template?.required_attribute_ids);
  await table('products').where({ id: productId }).update({ quality_score: score });
}

/** A template's products, whose score depends on it: a replay may project the template after them (another topic). */
export async function refreshTemplateScores(context: ProjectionContext, templateId: string): Promise<void> {
  const products = (await context.table('products').where({ template_id: templateId }).select('id')) as { id: string }[];
  for (const { id } of products) await refreshQualityScore(context, id);
}
