import { describe, expect, it } from 'vitest';
import { taxonomyDecider, taxonomyIdOf, type TaxonomyEvent } from '../../commands/catalog/taxonomy.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import { DeciderSpecification } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(taxonomyDecider);

const taxonomyId = taxonomyIdOf('t1', 'o1');

const kitchen: TaxonomyEvent = {
  type: 'CategoryCreated',
  data: { taxonomyId, categoryId: 'cat-1', name: 'Kitchen', slug: 'kitchen', description: null, parentId: null },
};
const colour: TaxonomyEvent = {
  type: 'AttributeCreated',
  data: { taxonomyId, attributeId: 'att-1', name: 'Colour', slug: 'colour', type: 'SELECT', options: ['red'] },
};
const specs: TaxonomyEvent = {
  type: 'AttributeGroupCreated',
  data: { taxonomyId, attributeGroupId: 'grp-1', name: 'Specs', description: null, attributeIds: ['att-1'] },
};

const category = (data: Partial<Extract<TaxonomyEvent, { type: 'CategoryCreated' }>['data']>) => ({
  type: 'CreateCategory' as const,
  data: { taxonomyId, categoryId: 'cat-2', name: 'Cups', slug: 'cups', description: null, parentId: null, ...data },
});
const attribute = (data: Partial<Extract<TaxonomyEvent, { type: 'AttributeCreated' }>['data']>) => ({
  type: 'CreateAttribute' as const,
  data: { taxonomyId, attributeId: 'att-2', name: 'Size', slug: 'size', type: 'TEXT' as const, options: [], ...data },
});
const template = (data: Partial<Extract<TaxonomyEvent, { type: 'TemplateCreated' }>['data']>) => ({
  type: 'CreateTemplate' as const,
  data: {
    taxonomyId,
    templateId: 'tpl-1',
    name: 'Mug',
    description: null,
    categoryId: null,
    attributeGroupIds: [],
    requiredAttributeIds: [],
    ...data,
  },
});

describe('taxonomy decider', () => {
  it('derives one taxonomy id per tenant and org', () => {
    expect(taxonomyIdOf('t1', 'o1')).toBe(taxonomyId);
    expect(taxonomyIdOf('t1', 'o2')).not.toBe(taxonomyId);
  });

  it('creates a category under an existing parent', () => {
    given([kitchen])
      .when(category({ parentId: 'cat-1' }))
      .then([{ type: 'CategoryCreated', data: category({ parentId: 'cat-1' }).data }]);
  });

  it('refuses a taken slug, an unknown parent, a known id and a category as its own parent', () => {
    given([kitchen])
      .when(category({ slug: 'kitchen' }))
      .thenThrows(ConflictError);
    given([kitchen])
      .when(category({ parentId: 'nope' }))
      .thenThrows(NotFoundError);
    given([kitchen])
      .when(category({ categoryId: 'cat-1', slug: 'other' }))
      .thenThrows(ConflictError);
    given([kitchen])
      .when(category({ categoryId: 'cat-9', parentId: 'cat-9' }))
      .thenThrows(NotFoundError);
  });

  it('defines attributes with unique slugs; only SELECT has options, and it needs them', () => {
    given([colour])
      .when(attribute({}))
      .then([{ type: 'AttributeCreated', data: attribute({}).data }]);
    given([colour])
      .when(attribute({ slug: 'colour' }))
      .thenThrows(ConflictError);
    given()
      .when(attribute({ type: 'SELECT', options: [] }))
      .thenThrows(ValidationError);
    given()
      .when(attribute({ type: 'NUMBER', options: ['1'] }))
      .thenThrows(ValidationError);
  });

  it('groups existing attributes only, each once', () => {
    const group = {
      type: 'CreateAttributeGroup' as const,
      data: { taxonomyId, attributeGroupId: 'grp-2', name: 'G', description: null, attributeIds: ['att-1'] },
    };
    given([colour])
      .when(group)
      .then([{ type: 'AttributeGroupCreated', data: group.data }]);
    given().when(group).thenThrows(NotFoundError);
    given([colour])
      .when({ ...group, data: { ...group.data, attributeIds: ['att-1', 'att-1'] } })
      .thenThrows(ValidationError);
    given([colour, specs])
      .when({ ...group, data: { ...group.data, attributeGroupId: 'grp-1' } })
      .thenThrows(ConflictError);
  });

  it('builds a template from existing categories, groups and attributes', () => {
    const full = template({ categoryId: 'cat-1', attributeGroupIds: ['grp-1'], requiredAttributeIds: ['att-1'] });
    given([kitchen, colour, specs])
      .when(full)
      .then([{ type: 'TemplateCreated', data: full.data }]);
    given([colour, specs]).when(full).thenThrows(NotFoundError);
    given([kitchen, colour]).when(full).thenThrows(NotFoundError);
    given([kitchen, specs])
      .when(template({ requiredAttributeIds: ['att-9'] }))
      .thenThrows(NotFoundError);
    const created = given([kitchen, colour, specs]).when(full).events()[0] as TaxonomyEvent;
    given([kitchen, colour, specs, created]).when(full).thenThrows(ConflictError);
  });
});
