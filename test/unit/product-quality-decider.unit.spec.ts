import { describe, expect, it } from 'vitest';
import type { ProductEvent } from '../../commands/catalog/product.ts';
import { productQualityDecider, type ProductQualityEvent } from '../../commands/quality/product-quality.ts';
import { qualityScore } from '../../commands/quality/quality-score.ts';
import { issueIdOf, qualityNamespaceOf } from '../../commands/quality/validation-issue.ts';
import { metadata } from '../support/command-metadata.ts';
import { DeciderSpecification } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(productQualityDecider);

const namespace = qualityNamespaceOf(metadata.tenantId, metadata.orgId);

/** Feeds one product's catalog changes one by one, as the validation router does. */
const run = (productId: string, changes: ProductEvent[]) =>
  given().whenInTurn(changes.map((change) => ({ type: 'AssessCatalogChange', data: { productId, change } })));

const created = (
  productId: string,
  description: string | null = null,
  category: string | null = null,
  extra: Partial<Extract<ProductEvent, { type: 'ProductCreated' }>['data']> = {},
): ProductEvent => ({
  type: 'ProductCreated',
  data: { productId, title: 'T', description, category, status: 'ACTIVE', ...extra },
});
const variant = (productId: string, variantId: string, sku: string | null, barcode: string | null = null): ProductEvent => ({
  type: 'VariantAdded',
  data: { productId, variantId, sku, barcode, price: '9.50', currency: 'EUR' },
});
const raisedTypes = (events: ProductQualityEvent[]) =>
  events.flatMap((e) => (e.type === 'ValidationIssueRaised' ? [`${e.data.productId}:${e.data.issueType}`] : []));
const resolvedIds = (events: ProductQualityEvent[]) =>
  events.flatMap((e) => (e.type === 'ValidationIssueResolved' ? [e.data.issueId] : []));
const assessed = (events: ProductQualityEvent[] | undefined) => events?.find((e) => e.type === 'ProductQualityAssessed')?.data;

const bare = { sku: null, hasBrand: false, hasMedia: false, templateId: null, filledAttributeIds: [] };

describe('product-quality decider', () => {
  it('assesses a bare product: missing description and a low score, with deterministic issue ids', () => {
    const { events, state } = run('p1', [created('p1')]);
    expect(events[0]?.[0]).toEqual({
      type: 'ProductQualityAssessed',
      data: {
        qualityId: 'p1',
        productId: 'p1',
        deleted: false,
        score: 10,
        releasedSkus: [],
        requiredAttributeIds: null,
        ...bare,
        hasDescription: false,
        hasCategory: false,
        variants: [],
      },
    });
    expect(raisedTypes(events[0] ?? [])).toEqual(['p1:MISSING_DESCRIPTION', 'p1:LOW_QUALITY_SCORE']);
    expect(Object.keys(state.open).sort()).toEqual(
      [issueIdOf(namespace, 'MISSING_DESCRIPTION', 'p1'), issueIdOf(namespace, 'LOW_QUALITY_SCORE', 'p1')].sort(),
    );
  });

  it('resolves the issues when the description arrives, and raises nothing twice', () => {
    const { events } = run('p1', [
      created('p1', null, 'c'),
      { type: 'ProductUpdated', data: { productId: 'p1', changes: [{ field: 'title', previous: 'T', current: 'T2' }] } },
      { type: 'ProductUpdated', data: { productId: 'p1', changes: [{ field: 'description', previous: null, current: 'now' }] } },
    ]);
    expect(raisedTypes(events[1] ?? [])).toEqual([]);
    expect(resolvedIds(events[2] ?? []).sort()).toEqual(
      [issueIdOf(namespace, 'MISSING_DESCRIPTION', 'p1'), issueIdOf(namespace, 'LOW_QUALITY_SCORE', 'p1')].sort(),
    );
  });

  it('names the SKUs a change releases, all of them on deletion, and resolves every issue of a deleted product', () => {
    const { events, state } = run('a', [
      created('a', null, null, { sku: 'OWN' }),
      variant('a', 'v1', 'S1'),
      variant('a', 'v2', 'S1'),
      { type: 'ProductUpdated', data: { productId: 'a', changes: [{ field: 'sku', previous: 'OWN', current: 'NEW' }] } },
      { type: 'ProductDeleted', data: { productId: 'a', variantIds: ['v1', 'v2'] } },
    ]);
    expect(events.map((e) => assessed(e)?.releasedSkus)).toEqual([[], [], [], ['OWN'], ['NEW', 'S1']]);
    expect(assessed(events[4])).toMatchObject({ deleted: true, score: 0, sku: null, variants: [] });
    expect(resolvedIds(events[4] ?? []).sort()).toEqual(
      [issueIdOf(namespace, 'MISSING_DESCRIPTION', 'a'), issueIdOf(namespace, 'LOW_QUALITY_SCORE', 'a')].sort(),
    );
    expect(state).toEqual({ facts: null, requiredAttributeIds: null, open: {} });
  });

  it("counts a product's own brand and media", () => {
    const { events } = run('a', [
      created('a', 'd', 'c', { sku: 'S', brand: 'B' }),
      {
        type: 'MediaAdded',
        data: { productId: 'a', mediaId: 'm', variantId: null, url: 'https://x.example/a', altText: null, sortOrder: 0 },
      },
    ]);
    expect(assessed(events[0])).toMatchObject({ score: 55, hasBrand: true, sku: 'S' });
    expect(assessed(events[1])).toMatchObject({ score: 65, hasMedia: true });
  });

  it('flags an invalid barcode per variant, and not a valid one', () => {
    const { events } = run('p', [
      created('p', 'd', 'c'),
      variant('p', 'v1', null, '4006381333931'),
      variant('p', 'v2', null, '4006381333932'),
    ]);
    expect(raisedTypes(events[1] ?? [])).toEqual([]);
    expect(events[2]?.find((e) => e.type === 'ValidationIssueRaised')).toMatchObject({
      data: { issueType: 'INVALID_BARCODE', severity: 'ERROR', issueId: issueIdOf(namespace, 'INVALID_BARCODE', 'v2') },
    });
  });

  it('ignores changes to a product it never saw created, and converges on replay', () => {
    expect(run('x', [{ type: 'ProductUpdated', data: { productId: 'x', changes: [] } }]).events[0]).toEqual([]);
    const changes = [
      created('a'),
      variant('a', 'va', 'S'),
      variant('a', 'vb', 'S', '123'),
      { type: 'ProductDeleted', data: { productId: 'a', variantIds: ['va', 'vb'] } } as ProductEvent,
    ];
    expect(run('a', changes).state).toEqual(run('a', changes).state);
  });

  it('scores by the documented rule set', () => {
    expect(qualityScore({ ...bare, hasDescription: false, hasCategory: false, variants: [] })).toBe(10);
    expect(qualityScore({ ...bare, hasDescription: true, hasCategory: true, variants: [] })).toBe(45);
    expect(
      qualityScore({
        ...bare,
        hasDescription: true,
        hasCategory: true,
        variants: [{ variantId: 'v', sku: null, barcode: '96385074', priced: true }],
      }),
    ).toBe(70);
    expect(
      qualityScore({
        ...bare,
        hasDescription: true,
        hasCategory: true,
        variants: [{ variantId: 'v', sku: null, barcode: '96385075', priced: true }],
      }),
    ).toBe(60);
  });

  describe("the template's required attributes", () => {
    const templated = (
      productId: string,
      attributes: Record<string, string>,
      required: string[] | undefined = ['a1', 'a2'],
    ): ProductEvent => created(productId, null, null, { templateId: 'tpl', templateRequiredAttributeIds: required, attributes });
    const scores = (events: ProductQualityEvent[][]) => events.map((e) => assessed(e)?.score);

    it('earns 10 points once every required attribute has a value, and loses them when one is removed', () => {
      const { events, state } = run('p', [
        templated('p', { a1: '1' }),
        {
          type: 'ProductUpdated',
          data: { productId: 'p', changes: [], attributeChanges: [{ attributeId: 'a2', previous: null, current: 'red' }] },
        },
        {
          type: 'ProductUpdated',
          data: { productId: 'p', changes: [], attributeChanges: [{ attributeId: 'a1', previous: '1', current: null }] },
        },
      ]);
      expect(scores(events)).toEqual([10, 20, 10]);
      expect(state).toMatchObject({ facts: { templateId: 'tpl', filledAttributeIds: ['a2'] }, requiredAttributeIds: ['a1', 'a2'] });
    });

    it('takes the requirements that come with a new template link, and drops them with the link', () => {
      const { events, state } = run('p', [
        created('p', null, null, { attributes: { a1: 'x' } }),
        {
          type: 'ProductUpdated',
          data: {
            productId: 'p',
            changes: [{ field: 'templateId', previous: null, current: 'tpl' }],
            templateRequiredAttributeIds: ['a1'],
          },
        },
        { type: 'ProductUpdated', data: { productId: 'p', changes: [{ field: 'description', previous: null, current: 'd' }] } },
        { type: 'ProductUpdated', data: { productId: 'p', changes: [{ field: 'templateId', previous: 'tpl', current: null }] } },
      ]);
      expect(scores(events)).toEqual([10, 20, 40, 30]);
      expect(events.map((e) => assessed(e)?.requiredAttributeIds)).toEqual([null, ['a1'], ['a1'], null]);
      expect(state.requiredAttributeIds).toBeNull();
    });

    it('earns nothing without a template or with unknown requirements, and everything for a template that requires nothing', () => {
      expect(scores(run('p', [templated('p', {}, undefined)]).events)).toEqual([10]);
      expect(scores(run('p', [templated('p', {}, [])]).events)).toEqual([20]);
      expect(qualityScore({ ...bare, hasDescription: false, hasCategory: false, variants: [], filledAttributeIds: ['a1'] })).toBe(10);
    });
  });
});
