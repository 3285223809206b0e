import { uuidv5 } from '../../ledger/uuid-v5.ts';
import { defineAggregate } from '../../ledger/aggregate.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';

/**
 * The taxonomy of one tenant and org: categories, attributes, attribute groups and product templates.
 * One aggregate per (tenant, org) so that slug uniqueness, parent existence and the references between
 * groups, templates, attributes and categories are invariants of a single writer (docs/decisions.md).
 */
const TAXONOMY_NAMESPACE = '8d3f0b8e-54a1-4c7e-9a0e-1c9b7f2d4e61';
export const taxonomyIdOf = (tenantId: string, orgId: string): string => uuidv5(`${tenantId}/${orgId}`, TAXONOMY_NAMESPACE);

export type AttributeType = 'TEXT' | 'NUMBER' | 'BOOLEAN' | 'SELECT';

// ── Events ──────────────────────────────────────────────────────────────────
export type CategoryCreated = Event<
  'CategoryCreated',
  { taxonomyId: string; categoryId: string; name: string; slug: string; description: string | null; parentId: string | null }
>;
export type AttributeCreated = Event<
  'AttributeCreated',
  { taxonomyId: string; attributeId: string; name: string; slug: string; type: AttributeType; options: string[] }
>;
export type AttributeGroupCreated = Event<
  'AttributeGroupCreated',
  { taxonomyId: string; attributeGroupId: string; name: string; description: string | null; attributeIds: string[] }
>;
export type TemplateCreated = Event<
  'TemplateCreated',
  {
    taxonomyId: string;
    templateId: string;
    name: string;
    description: string | null;
    categoryId: string | null;
    attributeGroupIds: string[];
    requiredAttributeIds: string[];
  }
>;

export type TaxonomyEvent = CategoryCreated | AttributeCreated | AttributeGroupCreated | TemplateCreated;

// ── State ───────────────────────────────────────────────────────────────────
export type Taxonomy = {
  /** category id → parent id */
  categories: Record<string, string | null>;
  categorySlugs: Record<string, string>;
  attributes: Record<string, AttributeType>;
  attributeSlugs: Record<string, string>;
  /** attribute group id → its attribute ids */
  attributeGroups: Record<string, string[]>;
  templates: Record<string, true>;
};

export const initialState = (): Taxonomy => ({
  categories: {},
  categorySlugs: {},
  attributes: {},
  attributeSlugs: {},
  attributeGroups: {},
  templates: {},
});

export const evolve = (state: Taxonomy, event: TaxonomyEvent): Taxonomy => {
  switch (event.type) {
    case 'CategoryCreated': {
      const { categoryId, slug, parentId } = event.data;
      return {
        ...state,
        categories: { ...state.categories, [categoryId]: parentId },
        categorySlugs: { ...state.categorySlugs, [slug]: categoryId },
      };
    }
    case 'AttributeCreated': {
      const { attributeId, slug, type } = event.data;
      return {
        ...state,
        attributes: { ...state.attributes, [attributeId]: type },
        attributeSlugs: { ...state.attributeSlugs, [slug]: attributeId },
      };
    }
    case 'AttributeGroupCreated':
      return { ...state, attributeGroups: { ...state.attributeGroups, [event.data.attributeGroupId]: event.data.attributeIds } };
    case 'TemplateCreated':
      return { ...state, templates: { ...state.templates, [event.data.templateId]: true } };
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
type Data<E extends TaxonomyEvent> = E['data'];
export type CreateCategory = Command<'CreateCategory', Data<CategoryCreated>>;
export type CreateAttribute = Command<'CreateAttribute', Data<AttributeCreated>>;
export type CreateAttributeGroup = Command<'CreateAttributeGroup', Data<AttributeGroupCreated>>;
export type CreateTemplate = Command<'CreateTemplate', Data<TemplateCreated>>;

export type TaxonomyCommand = CreateCategory | CreateAttribute | CreateAttributeGroup | CreateTemplate;

// ── Decide ──────────────────────────────────────────────────────────────────
const missing = (path: string, kind: string, ids: string[], known: Record<string, unknown>) => {
  const unknown = ids.filter((id) => !(id in known));
  if (unknown.length > 0)
    throw new NotFoundError(
      `${kind} ${unknown.join(', ')} not found`,
      unknown.map((id) => ({ path, message: `${kind} ${id} not found` })),
    );
};

const duplicates = (path: string, ids: string[]) => {
  if (new Set(ids).size !== ids.length) throw new ValidationError('an id is listed twice', [{ path, message: 'ids must be distinct' }]);
};

/** The chain of ancestors from `parentId` up; a chain that reaches `categoryId` would close a cycle. */
const closesCycle = (state: Taxonomy, categoryId: string, parentId: string | null): boolean => {
  for (
    let at = parentId, steps = 0;
    at !== null && steps <= Object.keys(state.categories).length;
    at = state.categories[at] ?? null, steps++
  ) {
    if (at === categoryId) return true;
  }
  return false;
};

const createCategory = ({ data }: CreateCategory, state: Taxonomy): TaxonomyEvent[] => {
  if (data.categoryId in state.categories) throw new ConflictError(`category ${data.categoryId} already exists`);
  if (data.slug in state.categorySlugs)
    throw new ConflictError(`a category with slug "${data.slug}" already exists`, [{ path: 'body.slug', message: 'already taken' }]);
  if (data.parentId !== null) missing('body.parentId', 'parent category', [data.parentId], state.categories);
  if (closesCycle(state, data.categoryId, data.parentId))
    throw new ConflictError('a category cannot be its own ancestor', [{ path: 'body.parentId', message: 'would create a cycle' }]);
  return [{ type: 'CategoryCreated', data }];
};

const createAttribute = ({ data }: CreateAttribute, state: Taxonomy): TaxonomyEvent[] => {
  if (data.attributeId in state.attributes) throw new ConflictError(`attribute ${data.attributeId} already exists`);
  if (data.slug in state.attributeSlugs)
    throw new ConflictError(`an attribute with slug "${data.slug}" already exists`, [{ path: 'body.slug', message: 'already taken' }]);
  if (data.type === 'SELECT' && data.options.length === 0)
    throw new ValidationError('a SELECT attribute needs options', [{ path: 'body.options', message: 'at least one option' }]);
  if (data.type !== 'SELECT' && data.options.length > 0)
    throw new ValidationError('only a SELECT attribute has options', [{ path: 'body.options', message: 'only for type SELECT' }]);
  return [{ type: 'AttributeCreated', data }];
};

const createAttributeGroup = ({ data }: CreateAttributeGroup, state: Taxonomy): TaxonomyEvent[] => {
  if (data.attributeGroupId in state.attributeGroups) throw new ConflictError(`attribute group ${data.attributeGroupId} already exists`);
  duplicates('body.attribute_ids', data.attributeIds);
  missing('body.attribute_ids', 'attribute', data.attributeIds, state.attributes);
  return [{ type: 'AttributeGroupCreated', data }];
};

const createTemplate = ({ data }: CreateTemplate, state: Taxonomy): TaxonomyEvent[] => {
  if (data.templateId in state.templates) throw new ConflictError(`template ${data.templateId} already exists`);
  if (data.categoryId !== null) missing('body.category_id', 'category', [data.categoryId], state.categories);
  duplicates('body.attribute_group_ids', data.attributeGroupIds);
  duplicates('body.required_attribute_ids', data.requiredAttributeIds);
  missing('body.attribute_group_ids', 'attribute group', data.attributeGroupIds, state.attributeGroups);
  missing('body.required_attribute_ids', 'attribute', data.requiredAttributeIds, state.attributes);
  return [{ type: 'TemplateCreated', data }];
};

export const decide = (command: TaxonomyCommand, state: Taxonomy): TaxonomyEvent[] => {
  switch (command.type) {
    case 'CreateCategory':
      return createCategory(command, state);
    case 'CreateAttribute':
      return createAttribute(command, state);
    case 'CreateAttributeGroup':
      return createAttributeGroup(command, state);
    case 'CreateTemplate':
      return createTemplate(command, state);
    default: {
      const exhaustive: never = command;
      throw new Error(`unknown command ${JSON.stringify(exhaustive)}`);
    }
  }
};

export const taxonomyDecider: Decider<TaxonomyCommand, TaxonomyEvent, Taxonomy> = { initialState, evolve, decide };

/** One per tenant and org: it owns slug uniqueness and the references inside the taxonomy. */
export const taxonomyAggregate = defineAggregate({
  name: 'taxonomy',
  stream: 'catalog.taxonomy',
  decider: taxonomyDecider,
  id: 'taxonomyId',
  events: {
    namespace: 'commerce.ledger.catalog',
    types: ['CategoryCreated', 'AttributeCreated', 'AttributeGroupCreated', 'TemplateCreated'],
  },
});
