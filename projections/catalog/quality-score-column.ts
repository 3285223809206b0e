import { factsOfRecord, type ProductRecord } from '../../commands/quality/product-facts.ts';
import { qualityScore } from '../../commands/quality/quality-score.ts';
import type { ProjectionContext } from '../../ledger/projection.ts';

type ProductRow = Record<'sku' | 'description' | 'category' | 'brand' | 'template_id', string | null> & {
  attributes: Record<string, string>;
};
type VariantRow = { id: string; sku: string | null; barcode: string | null; price: string | null };

/** The product as its rows hold it; undefined once it is gone. */
async function productRecord(
  { table }: ProjectionContext,
  productId: string,
): Promise<(ProductRecord & { templateId: string | null }) | undefined> {
  const product: ProductRow | undefined = await table('products')
    .where({ id: productId })
    .first('sku', 'description', 'category', 'brand', 'template_id', 'attributes');
  if (!product) return undefined;
  const variants: VariantRow[] = await table('variants').where({ product_id: productId }).select('id', 'sku', 'barcode', 'price');
  const media: { id: string } | undefined = await table('media').where({ product_id: productId }).first('id');
  const { template_id: templateId, attributes, ...fields } = product;
  return {
    ...fields,
    templateId,
    attributes,
    variants: variants.map(({ id, ...variant }) => ({ variantId: id, ...variant })),
    hasMedia: media !== undefined,
  };
}

/**
 * Recomputes a product's quality score from its rows, in the same transaction as the event that changed
 * them, so the score is on the product record as soon as the write returns and a replay recomputes it.
 */
export async function refreshQualityScore(context: ProjectionContext, productId: string): Promise<void> {
  const record = await productRecord(context, productId);
  if (!record) return;
  const template: { required_attribute_ids: string[] } | undefined = record.templateId
    ? await context.table('templates').where({ id: record.templateId }).first('required_attribute_ids')
    : undefined;
  const score = qualityScore(factsOfRecord(record), template?.required_attribute_ids);
  await context.table('products').where({ id: productId }).update({ quality_score: score });
}

/** Recomputes the scores of a template's products, which depend on its required attributes. */
export async function refreshTemplateScores(context: ProjectionContext, templateId: string): Promise<void> {
  const products: { id: string }[] = await context.table('products').where({ template_id: templateId }).select('id');
  for (const { id } of products) await refreshQualityScore(context, id);
}
