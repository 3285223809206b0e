import { isProductEvent, type ProductEvent } from '../../commands/catalog/product.ts';
import type { VariantRecord } from '../../commands/quality/product-facts.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import type { ProjectionContext } from '../../ledger/projection.ts';
import { firstOfEachId, insertRows, replacingAllBut, tableIn } from '../record-set.ts';
import type { CatalogEvent } from './catalog-event.ts';
import { foldProducts, idKey, type StoredProduct } from './product-fold.ts';
import { productColumns, type ProductRow } from './product-rows.ts';
import { scoreOfRows } from './quality-score-column.ts';
import { taxonomyRowOf, type TaxonomyRecordEvent, type TaxonomyRow } from './taxonomy-rows.ts';

const isTaxonomyEvent = (event: RecordedEvent<CatalogEvent>): event is RecordedEvent<TaxonomyRecordEvent> => !isProductEvent(event);

/** The products named, and those following one of the templates named, as their tables hold them: one statement. */
async function storedProducts(
  { sql, schema }: ProjectionContext,
  productIds: string[],
  templateIds: string[],
): Promise<Map<string, StoredProduct>> {
  if (productIds.length === 0 && templateIds.length === 0) return new Map();
  const products = tableIn(schema, 'products');
  const { rows } = await sql.query<{ id: string; row: ProductRow | null; variants: VariantRecord[]; has_media: boolean }>(
    `select t.id,
       case when p.id is null then null else to_jsonb(p) end as row,
       coalesce((select jsonb_agg(jsonb_build_object('variantId', v.id, 'sku', v.sku, 'barcode', v.barcode, 'price', v.price))
                 from ${tableIn(schema, 'variants')} v where v.product_id = t.id), '[]'::jsonb) as variants,
       exists (select 1 from ${tableIn(schema, 'media')} m where m.product_id = t.id) as has_media
     from (select unnest($1::uuid[]) as id union select id from ${products} where template_id = any($2::uuid[])) t
     left join ${products} p on p.id = t.id`,
    [productIds, templateIds],
  );
  return new Map(rows.map(({ id, row, variants, has_media }) => [idKey(id), { row: row ?? undefined, variants, hasMedia: has_media }]));
}

/**
 * The products whose only events here are their creation. Nothing of theirs needs reading: a creation is decided only
 * for a product that never existed, and should its row exist all the same, `insert … on conflict do nothing` leaves it
 * as the fold would (a creation does not change an existing product).
 */
function onlyCreatedIn(events: RecordedEvent<ProductEvent>[]): Set<string> {
  const created = new Map<string, boolean>();
  for (const event of events) {
    const id = idKey(event.data.productId);
    created.set(id, (created.get(id) ?? true) && event.type === 'ProductCreated');
  }
  return new Set([...created].flatMap(([id, only]) => (only ? [id] : [])));
}

/** The required attributes of each template named that exists (read after this batch's templates are written). */
async function requirementsOf({ sql, schema }: ProjectionContext, templateIds: string[]): Promise<Map<string, string[]>> {
  if (templateIds.length === 0) return new Map();
  const { rows } = await sql.query<{ id: string; required_attribute_ids: string[] }>(
    `select id, required_attribute_ids from ${tableIn(schema, 'templates')} where id = any($1::uuid[])`,
    [templateIds],
  );
  return new Map(rows.map((row) => [idKey(row.id), row.required_attribute_ids]));
}

/** One insert per taxonomy table; the first creation of an id wins. */
async function insertTaxonomy({ sql, schema }: ProjectionContext, rows: TaxonomyRow[]): Promise<void> {
  const byTable = new Map<TaxonomyRow['table'], TaxonomyRow['row'][]>();
  for (const { table, row } of rows) byTable.set(table, [...(byTable.get(table) ?? []), row]);
  for (const [table, tableRows] of byTable) await insertRows(sql, schema, table, firstOfEachId(tableRows), 'on conflict (id) do nothing');
}

/**
 * What a batch of catalog events does: taxonomy rows, then every product the batch touches folded in memory from its
 * stored rows (read once) and its events, scored in memory, and written with one statement per table.
 */
export async function applyCatalogBatch(events: RecordedEvent<CatalogEvent>[], context: ProjectionContext): Promise<void> {
  const { sql, schema } = context;
  const taxonomyEvents = events.filter(isTaxonomyEvent);
  await insertTaxonomy(context, taxonomyEvents.map(taxonomyRowOf));
  // A template's products are scored with its requirements: those following a template created now are rescored.
  const newTemplateIds = taxonomyEvents.flatMap((event) => (event.type === 'TemplateCreated' ? [event.data.templateId] : []));
  const productEvents = events.filter(isProductEvent);
  if (productEvents.length === 0 && newTemplateIds.length === 0) return;

  const productIds = [...new Set(productEvents.map((event) => idKey(event.data.productId)))];
  const createdHere = onlyCreatedIn(productEvents);
  const stored = await storedProducts(
    context,
    productIds.filter((id) => !createdHere.has(id)),
    newTemplateIds,
  );
  // A product read anyway (it follows a template created now) is rescored and written like the others.
  const insertedOnly = (id: string) => createdHere.has(id) && !stored.has(id);
  const folded = foldProducts(stored, productEvents);
  const existing = [...folded.values()].flatMap((product) => (product.row ? [{ ...product, row: product.row }] : []));
  const templateIds = [...new Set(existing.flatMap(({ row }) => (row.template_id ? [idKey(row.template_id)] : [])))];
  const requirements = await requirementsOf(context, templateIds);
  const scored = existing.map(({ row, variants, hasMedia }) =>
    productColumns({
      ...row,
      quality_score: scoreOfRows({
        product: row,
        variants,
        hasMedia,
        requiredAttributeIds: row.template_id ? requirements.get(idKey(row.template_id)) : undefined,
      }),
    }),
  );

  const clearedIds = [...folded].flatMap(([id, product]) => (product.cleared ? [id] : []));
  if (clearedIds.length > 0) {
    await sql.query(`delete from ${tableIn(schema, 'media')} where product_id = any($1::uuid[])`, [clearedIds]);
    await sql.query(`delete from ${tableIn(schema, 'variants')} where product_id = any($1::uuid[])`, [clearedIds]);
    const goneIds = [...folded].flatMap(([id, product]) => (product.cleared && !product.row ? [id] : []));
    if (goneIds.length > 0) await sql.query(`delete from ${tableIn(schema, 'products')} where id = any($1::uuid[])`, [goneIds]);
  }
  const added = [...folded.values()];
  await insertRows(
    sql,
    schema,
    'variants',
    added.flatMap((product) => [...product.addedVariants.values()]),
    'on conflict (id) do nothing',
  );
  await insertRows(
    sql,
    schema,
    'media',
    added.flatMap((product) => [...product.addedMedia.values()]),
    'on conflict (id) do nothing',
  );
  const created = scored.filter((row) => insertedOnly(idKey(row.id)));
  const changed = scored.filter((row) => !insertedOnly(idKey(row.id)));
  await insertRows(sql, schema, 'products', created, 'on conflict (id) do nothing');
  await insertRows(sql, schema, 'products', changed, replacingAllBut(changed, 'id'));
}
