import type { BrandEvent } from '../../commands/catalog/brand.ts';
import type { TaxonomyEvent } from '../../commands/catalog/taxonomy.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { mapperOf, type EventMappers } from '../../ledger/projection.ts';
import type { Row } from '../record-set.ts';

export type TaxonomyRecordEvent = TaxonomyEvent | BrandEvent;

/** The table a taxonomy event adds a row to, and the row. */
export type TaxonomyRow = { table: 'categories' | 'attributes' | 'attribute_groups' | 'templates' | 'brands'; row: Row & { id: string } };

/** The columns every taxonomy row shares; taxonomy records are created, never changed, so updated_at = created_at. */
const owned = (event: RecordedEvent, id: string, name: string, description: string | null) => ({
  id,
  tenant_id: event.envelope.tenantId,
  org_id: event.envelope.orgId,
  name,
  description,
  created_at: new Date(event.envelope.occurredAt),
  updated_at: new Date(event.envelope.occurredAt),
});

const taxonomyRows: EventMappers<TaxonomyRecordEvent, TaxonomyRow> = {
  CategoryCreated: (event) => {
    const { categoryId, name, description, slug, parentId } = event.data;
    return { table: 'categories', row: { ...owned(event, categoryId, name, description), slug, parent_id: parentId } };
  },
  AttributeCreated: (event) => {
    const { attributeId, name, slug, type, options } = event.data;
    return { table: 'attributes', row: { ...owned(event, attributeId, name, null), slug, type, options } };
  },
  AttributeGroupCreated: (event) => {
    const { attributeGroupId, name, description, attributeIds } = event.data;
    return { table: 'attribute_groups', row: { ...owned(event, attributeGroupId, name, description), attribute_ids: attributeIds } };
  },
  TemplateCreated: (event) => {
    const { templateId, name, description, categoryId, attributeGroupIds, requiredAttributeIds } = event.data;
    const row = {
      ...owned(event, templateId, name, description),
      category_id: categoryId,
      attribute_group_ids: attributeGroupIds,
      required_attribute_ids: requiredAttributeIds,
    };
    return { table: 'templates', row };
  },
  BrandCreated: (event) => {
    const { brandId, name, description, logoUrl } = event.data;
    return { table: 'brands', row: { ...owned(event, brandId, name, description), logo_url: logoUrl } };
  },
};

/** Categories, attributes, attribute groups, templates and brands: the row each creation adds (the first one stays). */
export const taxonomyRowOf = mapperOf(taxonomyRows);
