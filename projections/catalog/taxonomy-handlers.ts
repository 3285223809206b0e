import type { BrandEvent } from '../../commands/catalog/brand.ts';
import type { TaxonomyEvent } from '../../commands/catalog/taxonomy.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import type { EventHandlers, ProjectionContext } from '../../ledger/projection.ts';
import { refreshTemplateScores } from './quality-score-column.ts';

type Handled = TaxonomyEvent | BrandEvent;

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

const insert = (context: ProjectionContext, tableName: string, row: Record<string, unknown>) =>
  context.table(tableName).insert(row).onConflict('id').ignore();

/** Categories, attributes, attribute groups, templates and brands, as their list endpoints read them. */
export const taxonomyHandlers: EventHandlers<Handled> = {
  CategoryCreated: (event, context) => {
    const { categoryId, name, description, slug, parentId } = event.data;
    return insert(context, 'categories', { ...owned(event, categoryId, name, description), slug, parent_id: parentId });
  },
  AttributeCreated: (event, context) => {
    const { attributeId, name, slug, type, options } = event.data;
    return insert(context, 'attributes', { ...owned(event, attributeId, name, null), slug, type, options: JSON.stringify(options) });
  },
  AttributeGroupCreated: (event, context) => {
    const { attributeGroupId, name, description, attributeIds } = event.data;
    return insert(context, 'attribute_groups', {
      ...owned(event, attributeGroupId, name, description),
      attribute_ids: JSON.stringify(attributeIds),
    });
  },
  TemplateCreated: async (event, context) => {
    const { templateId, name, description, categoryId, attributeGroupIds, requiredAttributeIds } = event.data;
    await insert(context, 'templates', {
      ...owned(event, templateId, name, description),
      category_id: categoryId,
      attribute_group_ids: JSON.stringify(attributeGroupIds),
      required_attribute_ids: JSON.stringify(requiredAttributeIds),
    });
    // Its products' scores depend on it: a replay may project the template after them (another topic).
    await refreshTemplateScores(context, templateId);
  },
  BrandCreated: (event, context) => {
    const { brandId, name, description, logoUrl } = event.data;
    return insert(context, 'brands', { ...owned(event, brandId, name, description), logo_url: logoUrl });
  },
};
