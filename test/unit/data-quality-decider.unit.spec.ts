import { describe, expect, it } from 'vitest';
import type { ProductEvent } from '../../commands/catalog/product.ts';
import { decide, evolve, initialState, issueIdOf, qualityIdOf, type AssessCatalogChange, type DataQuality, type QualityEvent } from '../../commands/quality/data-quality.ts';
import { qualityScore } from '../../commands/quality/quality-score.ts';
import { metadata } from '../support/command-metadata.ts';

const qualityId = qualityIdOf('t1', 'o1');

/** Feeds catalog changes one by one, as the validation router does; returns every event and the final state. */
type Change = AssessCatalogChange['data']['change'];
const run = (changes: Change[], state: DataQuality = initialState()) => {
  const events: QualityEvent[][] = [];
  for (const change of changes) {
    const decided = decide({ type: 'AssessCatalogChange', data: { qualityId, change }, metadata }, state);
    events.push(decided);
    state = decided.reduce(evolve, state);
  }
  return { events, state };
};

const created = (productId: string, description: string | null = 'described', category: string | null = 'c'): ProductEvent => ({
  type: 'ProductCreated',
  data: { productId, title: 'T', description, category, status: 'ACTIVE' },
});
const variant = (productId: string, variantId: string, sku: string | null, barcode: string | null = null): ProductEvent => ({
  type: 'VariantAdded',
  data: { productId, variantId, sku, barcode, price: '1.00', currency: 'EUR' },
});
const raisedTypes = (events: QualityEvent[]) => events.flatMap((e) => (e.type === 'ValidationIssueRaised' ? [`${e.data.productId}:${e.data.issueType}`] : []));
const resolvedIds = (events: QualityEvent[]) => events.flatMap((e) => (e.type === 'ValidationIssueResolved' ? [e.data.issueId] : []));

const bare = { sku: null, hasBrand: false, hasMedia: false, templateId: null, filledAttributeIds: [] };

describe('data-quality decider', () => {
  it('assesses a bare product: missing description and a low score, with deterministic issue ids', () => {
    const { events, state } = run([created('p1', null, null)]);
    expect(events[0]?.[0]).toEqual({
      type: 'ProductQualityAssessed',
      data: { qualityId, productId: 'p1', deleted: false, score: 10, ...bare, hasDescription: false, hasCategory: false, variants: [] },
    });
    expect(raisedTypes(events[0] ?? [])).toEqual(['p1:MISSING_DESCRIPTION', 'p1:LOW_QUALITY_SCORE']);
    expect(Object.keys(state.open).sort()).toEqual([issueIdOf(qualityId, 'MISSING_DESCRIPTION', 'p1'), issueIdOf(qualityId, 'LOW_QUALITY_SCORE', 'p1')].sort());
  });

  it('resolves the issues when the description arrives, and raises nothing twice', () => {
    const { events } = run([
      created('p1', null, 'c'),
      { type: 'ProductUpdated', data: { productId: 'p1', changes: [{ field: 'title', previous: 'T', current: 'T2' }] } },
      { type: 'ProductUpdated', data: { productId: 'p1', changes: [{ field: 'description', previous: null, current: 'now' }] } },
    ]);
    expect(raisedTypes(events[1] ?? [])).toEqual([]);
    expect(resolvedIds(events[2] ?? []).sort()).toEqual([issueIdOf(qualityId, 'MISSING_DESCRIPTION', 'p1'), issueIdOf(qualityId, 'LOW_QUALITY_SCORE', 'p1')].sort());
  });

  it('flags a duplicate SKU on both products, and deleting one resolves the pair', () => {
    const { events, state } = run([created('a'), created('b'), variant('a', 'va', 'SKU-1'), variant('b', 'vb', 'SKU-1')]);
    expect(raisedTypes(events[3] ?? []).sort()).toEqual(['a:DUPLICATE_SKU', 'b:DUPLICATE_SKU']);
    const after = run([{ type: 'ProductDeleted', data: { productId: 'b', variantIds: ['vb'] } }], state);
    expect(resolvedIds(after.events[0] ?? []).sort()).toEqual([issueIdOf(qualityId, 'DUPLICATE_SKU', 'a/SKU-1'), issueIdOf(qualityId, 'DUPLICATE_SKU', 'b/SKU-1')].sort());
    expect(after.state.open).toEqual({});
    expect(after.state.products.b).toBeUndefined();
  });

  it("counts a product's own SKU and brand and media", () => {
    const own: ProductEvent = { type: 'ProductCreated', data: { productId: 'a', title: 'T', description: 'd', category: 'c', status: 'ACTIVE', sku: 'S', brand: 'B' } };
    const { events } = run([own, created('b'), variant('b', 'vb', 'S'), { type: 'MediaAdded', data: { productId: 'a', mediaId: 'm', variantId: null, url: 'https://x.example/a', altText: null, sortOrder: 0 } }]);
    expect(raisedTypes(events[2] ?? []).sort()).toEqual(['a:DUPLICATE_SKU', 'b:DUPLICATE_SKU']);
    expect(events[0]?.[0]).toMatchObject({ data: { score: 55, hasBrand: true, sku: 'S' } });
    expect(events[3]?.[0]).toMatchObject({ data: { score: 65, hasMedia: true } });
  });

  it('flags an invalid barcode per variant, and not a valid one', () => {
    const { events } = run([created('p'), variant('p', 'v1', null, '4006381333931'), variant('p', 'v2', null, '4006381333932')]);
    expect(raisedTypes(events[1] ?? [])).toEqual([]);
    expect(events[2]?.find((e) => e.type === 'ValidationIssueRaised')).toMatchObject({ data: { issueType: 'INVALID_BARCODE', severity: 'ERROR', issueId: issueIdOf(qualityId, 'INVALID_BARCODE', 'v2') } });
  });

  it('ignores changes to a product it never saw created, and converges on replay', () => {
    expect(run([{ type: 'ProductUpdated', data: { productId: 'x', changes: [] } }]).events[0]).toEqual([]);
    const changes = [created('a', null), variant('a', 'va', 'S'), created('b'), variant('b', 'vb', 'S', '123'), { type: 'ProductDeleted', data: { productId: 'a', variantIds: ['va'] } } as ProductEvent];
    expect(run(changes).state).toEqual(run(changes).state);
  });

  it('scores by the documented rule set', () => {
    expect(qualityScore({ ...bare, hasDescription: false, hasCategory: false, variants: [] })).toBe(10);
    expect(qualityScore({ ...bare, hasDescription: true, hasCategory: true, variants: [] })).toBe(45);
    expect(qualityScore({ ...bare, hasDescription: true, hasCategory: true, variants: [{ variantId: 'v', sku: null, barcode: '96385074', priced: true }] })).toBe(70);
    expect(qualityScore({ ...bare, hasDescription: true, hasCategory: true, variants: [{ variantId: 'v', sku: null, barcode: '96385075', priced: true }] })).toBe(60);
  });

  describe("the template's required attributes", () => {
    const template = (templateId: string, requiredAttributeIds: string[]): Change => ({
      type: 'TemplateCreated',
      data: { taxonomyId: 'x', templateId, name: 'Cup', description: null, categoryId: null, attributeGroupIds: [], requiredAttributeIds },
    });
    const templated = (productId: string, attributes: Record<string, string>): Change => ({
      type: 'ProductCreated',
      data: { productId, title: 'T', description: null, category: null, status: 'ACTIVE', templateId: 'tpl', attributes },
    });
    const scores = (events: QualityEvent[]) => events.flatMap((e) => (e.type === 'ProductQualityAssessed' ? [`${e.data.productId}:${e.data.score}`] : []));

    it('earns 10 points once every required attribute has a value, and loses them when one is removed', () => {
      const { events, state } = run([
        template('tpl', ['a1', 'a2']),
        templated('p', { a1: '1' }),
        { type: 'ProductUpdated', data: { productId: 'p', changes: [], attributeChanges: [{ attributeId: 'a2', previous: null, current: 'red' }] } },
        { type: 'ProductUpdated', data: { productId: 'p', changes: [], attributeChanges: [{ attributeId: 'a1', previous: '1', current: null }] } },
      ]);
      expect(events[0]).toEqual([{ type: 'TemplateRequirementsNoted', data: { qualityId, templateId: 'tpl', requiredAttributeIds: ['a1', 'a2'] } }]);
      expect([1, 2, 3].map((i) => scores(events[i] ?? []))).toEqual([['p:10'], ['p:20'], ['p:10']]);
      expect(state.products.p).toMatchObject({ templateId: 'tpl', filledAttributeIds: ['a2'] });
    });

    it('judges the products already following a template when it arrives later, and converges either way', () => {
      const product = templated('p', { a1: '1' });
      const late = run([created('q', 'd', 'c'), product, template('tpl', ['a1'])]);
      expect(scores(late.events[1] ?? [])).toEqual(['p:10']);
      expect(scores(late.events[2] ?? [])).toEqual(['p:20']);
      const early = run([created('q', 'd', 'c'), template('tpl', ['a1']), product]);
      expect(late.state).toEqual(early.state);
    });

    it('earns nothing without a template, and everything for a template that requires nothing', () => {
      expect(qualityScore({ ...bare, hasDescription: false, hasCategory: false, variants: [], filledAttributeIds: ['a1'] })).toBe(10);
      expect(qualityScore({ ...bare, templateId: 'tpl', hasDescription: false, hasCategory: false, variants: [] })).toBe(10);
      expect(qualityScore({ ...bare, templateId: 'tpl', hasDescription: false, hasCategory: false, variants: [] }, [])).toBe(20);
    });
  });
});
