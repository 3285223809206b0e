import { describe, expect, it } from 'vitest';
import {
  decide as decideProduct,
  evolve as evolveProduct,
  initialState as noProduct,
  type Product,
  type ProductCommand,
  type ProductEvent,
} from '../../commands/catalog/product.ts';
import { factsOfRecord, type ProductRecord, type VariantRecord } from '../../commands/quality/product-facts.ts';
import {
  decide as decideQuality,
  evolve as evolveQuality,
  initialState as noQuality,
  type ProductQuality,
} from '../../commands/quality/product-quality.ts';
import { qualityScore, type ProductFacts } from '../../commands/quality/quality-score.ts';
import type { CommandMetadata } from '../../ledger/message.ts';
import { metadata } from '../support/command-metadata.ts';

/**
 * The product's quality aggregate and the catalog projection reach a product's quality facts by two paths: the
 * aggregate folds them event by event (factsAfter), the projection reads them from the rows the events left
 * (factsOfRecord). Both must give the same facts and the same score after every event of every history.
 */

/** Templates as the edge reads them from the taxonomy read model, and as rm_catalog.templates holds them. */
const templates: Record<string, string[]> = { lamp: ['colour', 'wattage'], empty: [], shade: ['colour'] };

type Step = (productId: string) => ProductCommand;

/** What the edge sends: a link to a template carries the template's requirements. */
const withRequirements = <D extends { templateId?: string | null }>(data: D) =>
  data.templateId ? { ...data, templateRequiredAttributeIds: templates[data.templateId] } : data;

const command = <C extends ProductCommand>(type: C['type'], data: C['data']): C => ({ type, data, metadata }) as C;

const create =
  (fields: Partial<Extract<ProductCommand, { type: 'CreateProduct' }>['data']> = {}): Step =>
  (productId) =>
    command('CreateProduct', withRequirements({ productId, title: 'Lamp', description: null, category: null, ...fields }));
const update =
  (fields: Omit<Extract<ProductCommand, { type: 'UpdateProduct' }>['data'], 'productId'>): Step =>
  (productId) =>
    command('UpdateProduct', withRequirements({ productId, ...fields }));
const variant =
  (variantId: string, fields: Partial<Omit<VariantRecord, 'variantId'>> = {}): Step =>
  (productId) =>
    command('AddVariant', { productId, variantId, sku: null, barcode: null, price: '9.50', currency: 'EUR', ...fields });
const media =
  (mediaId: string): Step =>
  (productId) =>
    command('AddMedia', { productId, mediaId, variantId: null, url: 'https://cdn.example.com/a.png', altText: null, sortOrder: 0 });
const remove = (): Step => (productId) => command('DeleteProduct', { productId });

/** The product's record after an event, as the catalog projection's handlers leave its rows. */
const recordAfter = (product: Product, record: ProductRecord | undefined, event: ProductEvent): ProductRecord | undefined => {
  if (product.status !== 'Existing') return undefined;
  const { title, description, category, sku, brand, templateId, attributes } = product;
  const variants = record?.variants ?? [];
  return {
    title,
    description,
    category,
    sku,
    brand,
    templateId,
    attributes,
    variants: event.type === 'VariantAdded' ? [...variants, event.data] : variants,
    hasMedia: (record?.hasMedia ?? false) || event.type === 'MediaAdded',
  };
};

type Assessment = { facts: ProductFacts; score: number } | 'gone';

/** Order is not a fact: the projection reads variants and attributes unordered. */
const comparable = (assessment: Assessment): Assessment =>
  assessment === 'gone'
    ? assessment
    : {
        score: assessment.score,
        facts: {
          ...assessment.facts,
          variants: [...assessment.facts.variants].sort((a, b) => a.variantId.localeCompare(b.variantId)),
          filledAttributeIds: [...assessment.facts.filledAttributeIds].sort(),
        },
      };

/** Runs the product's commands and, after each of its events, assesses the product by both paths. */
function assessBothWays(steps: Step[], productId = 'p1', meta: CommandMetadata = metadata) {
  let product = noProduct();
  let quality: ProductQuality = noQuality();
  let record: ProductRecord | undefined;
  const byDecider: Assessment[] = [];
  const byProjection: Assessment[] = [];
  for (const step of steps) {
    for (const event of decideProduct(step(productId), product)) {
      product = evolveProduct(product, event);
      record = recordAfter(product, record, event);
      const decided = decideQuality({ type: 'AssessCatalogChange', data: { productId, change: event }, metadata: meta }, quality);
      quality = decided.reduce(evolveQuality, quality);
      const assessed = decided.find((e) => e.type === 'ProductQualityAssessed');
      if (!assessed) throw new Error(`no assessment of ${event.type}`);
      const { deleted, score, sku, hasDescription, hasCategory, hasBrand, hasMedia, variants, templateId, filledAttributeIds } =
        assessed.data;
      const facts = { sku, hasDescription, hasCategory, hasBrand, hasMedia, variants, templateId, filledAttributeIds };
      byDecider.push(comparable(deleted ? 'gone' : { facts, score }));
      const projected = record && factsOfRecord(record);
      byProjection.push(
        comparable(
          projected
            ? { facts: projected, score: qualityScore(projected, record?.templateId ? templates[record.templateId] : undefined) }
            : 'gone',
        ),
      );
    }
  }
  return { byDecider, byProjection };
}

const histories: Record<string, Step[]> = {
  'a bare product': [create()],
  'the example of docs/decisions.md: 45, 70, then 90': [
    create({ description: 'A cup', category: 'kitchen' }),
    variant('v1', { barcode: '96385074' }),
    update({ brand: 'Acme' }),
    media('m1'),
  ],
  'fields cleared, blanked and restored': [
    create({ description: 'Lit', category: 'home', brand: 'Acme', sku: 'L-1' }),
    update({ description: '   ', category: null }),
    update({ brand: null, sku: 'L-2', title: 'Desk lamp' }),
    update({ description: 'Back', category: 'office', sku: null }),
  ],
  'variants: unpriced, without a barcode, with an invalid barcode': [
    create({ description: 'd' }),
    variant('v1', { price: null, sku: 'S1' }),
    variant('v2', { barcode: '96385074', sku: 'S1' }),
    variant('v3', { barcode: '12345678', price: null }),
  ],
  'a template filled at creation, then an attribute removed and restored': [
    create({ templateId: 'lamp', attributes: { colour: 'red', wattage: '40' } }),
    update({ attributes: { wattage: null } }),
    update({ attributes: { wattage: '60', finish: 'matte' } }),
  ],
  'a template linked, relinked and unlinked by updates': [
    create({ attributes: { colour: 'red' } }),
    update({ templateId: 'lamp' }),
    update({ templateId: 'shade' }),
    update({ templateId: 'empty' }),
    update({ templateId: null }),
  ],
  'a template that requires nothing': [create({ templateId: 'empty' })],
  'moved to DRAFT and back (no fact changes)': [
    create({ description: 'd', brand: 'Acme' }),
    update({ status: 'DRAFT' }),
    update({ status: 'ACTIVE', category: 'home' }),
  ],
  'a product deleted': [create({ description: 'd', sku: 'S' }), variant('v1', { sku: 'S' }), media('m1'), remove()],
};

describe("a product's quality facts: the decider and the catalog projection agree", () => {
  for (const [name, steps] of Object.entries(histories)) {
    it(name, () => {
      const { byDecider, byProjection } = assessBothWays(steps);
      expect(byDecider.length).toBeGreaterThan(0);
      expect(byProjection).toEqual(byDecider);
    });
  }

  it('scores the example of docs/decisions.md as documented', () => {
    const { byDecider } = assessBothWays(histories['the example of docs/decisions.md: 45, 70, then 90'] ?? []);
    expect(byDecider.map((a) => (a === 'gone' ? a : a.score))).toEqual([45, 70, 80, 90]);
  });
});
