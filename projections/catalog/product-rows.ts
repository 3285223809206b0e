import { applyAttributeChanges, type ProductEvent, type ProductField, type ProductUpdated } from '../../commands/catalog/product.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import type { ScoredProductRow } from './quality-score-column.ts';

type Recorded<T extends ProductEvent['type']> = RecordedEvent<Extract<ProductEvent, { type: T }>>;

/** A product row as the projection writes it (timestamps as Dates, or as the ISO text Postgres gives back). */
export type ProductRow = ScoredProductRow & {
  id: string;
  tenant_id: string;
  org_id: string;
  title: string;
  status: string;
  quality_score: number | null;
  created_at: Date | string;
  updated_at: Date | string;
};

const at = (event: RecordedEvent) => new Date(event.envelope.occurredAt);

const columnOf = (field: ProductField) => (field === 'templateId' ? 'template_id' : field);

/** Every column, named in one order, so that rows from events and rows read back have the same shape. */
export const productColumns = (row: ProductRow): ProductRow => ({
  id: row.id,
  tenant_id: row.tenant_id,
  org_id: row.org_id,
  title: row.title,
  description: row.description,
  category: row.category,
  sku: row.sku,
  brand: row.brand,
  template_id: row.template_id,
  attributes: row.attributes,
  status: row.status,
  quality_score: row.quality_score,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/** The row a product's creation makes; its score comes after (it depends on the other tables). */
export const createdProduct = (event: Recorded<'ProductCreated'>): ProductRow => ({
  id: event.data.productId,
  tenant_id: event.envelope.tenantId,
  org_id: event.envelope.orgId,
  title: event.data.title,
  description: event.data.description,
  category: event.data.category,
  sku: event.data.sku ?? null,
  brand: event.data.brand ?? null,
  template_id: event.data.templateId ?? null,
  attributes: event.data.attributes ?? {},
  status: event.data.status,
  quality_score: null,
  created_at: at(event),
  updated_at: at(event),
});

/** The columns an update sets: the changed fields, the attribute values when some changed (given the current ones), updated_at. */
export const updatedColumns = (event: RecordedEvent<ProductUpdated>, attributes: () => ScoredProductRow['attributes']) => {
  const attributeChanges = event.data.attributeChanges ?? [];
  return {
    ...Object.fromEntries(event.data.changes.map((change) => [columnOf(change.field), change.current])),
    ...(attributeChanges.length > 0 ? { attributes: applyAttributeChanges(attributes(), attributeChanges) } : {}),
    updated_at: at(event),
  };
};

export const variantRow = (event: Recorded<'VariantAdded'>) => ({
  id: event.data.variantId,
  product_id: event.data.productId,
  tenant_id: event.envelope.tenantId,
  org_id: event.envelope.orgId,
  sku: event.data.sku,
  barcode: event.data.barcode,
  price: event.data.price,
  currency: event.data.currency,
  created_at: at(event),
});

export const mediaRow = (event: Recorded<'MediaAdded'>) => ({
  id: event.data.mediaId,
  tenant_id: event.envelope.tenantId,
  org_id: event.envelope.orgId,
  product_id: event.data.productId,
  variant_id: event.data.variantId,
  url: event.data.url,
  alt_text: event.data.altText,
  sort_order: event.data.sortOrder,
  created_at: at(event),
  updated_at: at(event),
});
