import type { ProductEvent } from '../catalog/product.ts';
import { defineAggregate } from '../../ledger/aggregate.ts';
import type { Command, CommandInput, Decider, Event } from '../../ledger/message.ts';
import { isValidGtin } from './gtin.ts';
import { factsAfter, noFacts, requirementsAfter } from './product-facts.ts';
import { LOW_QUALITY_THRESHOLD, qualityScore, type ProductFacts } from './quality-score.ts';
import {
  evolveOpenIssues,
  issueIdOf,
  qualityNamespaceOf,
  reconcileIssues,
  type IssueType,
  type Severity,
  type ValidationIssueRaised,
  type ValidationIssueResolved,
  type WantedIssue,
} from './validation-issue.ts';

/**
 * The data quality of one product: its facts, its score and the issues that depend on it alone (missing
 * description, invalid barcodes, a low score). One aggregate per product, so its state stays small however large
 * the catalog; duplicate SKUs span products and are the SKU usage aggregates' business (sku-usage.ts), fed with
 * the SKUs each assessment uses and releases.
 */

// ── Events ──────────────────────────────────────────────────────────────────
/**
 * `releasedSkus`: SKUs the product used before this change and no longer does. `requiredAttributeIds`: those
 * of the product's template, null without one (or when not known).
 */
export type ProductQualityAssessed = Event<
  'ProductQualityAssessed',
  {
    qualityId: string;
    productId: string;
    deleted: boolean;
    score: number;
    releasedSkus: string[];
    requiredAttributeIds: string[] | null;
  } & ProductFacts
>;
export type ProductQualityEvent = ProductQualityAssessed | ValidationIssueRaised | ValidationIssueResolved;

// ── State ───────────────────────────────────────────────────────────────────
export type ProductQuality = {
  facts: ProductFacts | null;
  requiredAttributeIds: string[] | null;
  open: Record<string, { productId: string; message: string }>;
};

export const initialState = (): ProductQuality => ({ facts: null, requiredAttributeIds: null, open: {} });

export const evolve = (state: ProductQuality, event: ProductQualityEvent): ProductQuality => {
  switch (event.type) {
    case 'ProductQualityAssessed': {
      const {
        deleted,
        requiredAttributeIds,
        sku,
        hasDescription,
        hasCategory,
        hasBrand,
        hasMedia,
        variants,
        templateId,
        filledAttributeIds: filled,
      } = event.data;
      const facts: ProductFacts = {
        sku,
        hasDescription,
        hasCategory,
        hasBrand,
        hasMedia,
        variants,
        templateId,
        filledAttributeIds: filled,
      };
      return { ...state, facts: deleted ? null : facts, requiredAttributeIds };
    }
    case 'ValidationIssueRaised':
    case 'ValidationIssueResolved':
      return { ...state, open: evolveOpenIssues(state.open, event) };
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
/** A catalog event of the product, judged in the product processor's own transaction (`assessmentsOf`, commands/index.ts). */
export type AssessCatalogChange = Command<'AssessCatalogChange', { productId: string; change: ProductEvent }>;
export type ProductQualityCommand = AssessCatalogChange;

// ── Decide ──────────────────────────────────────────────────────────────────
/** Every SKU a product uses, its own and its variants', once per use. */
export const skuUses = (facts: ProductFacts | null | undefined): string[] =>
  facts ? [facts.sku, ...facts.variants.map((v) => v.sku)].flatMap((sku) => (sku === null ? [] : [sku])) : [];

const localIssues = (namespace: string, productId: string, facts: ProductFacts, score: number): WantedIssue[] => {
  const issue = (issueType: IssueType, severity: Severity, subject: string, message: string): WantedIssue => ({
    issueId: issueIdOf(namespace, issueType, subject),
    productId,
    issueType,
    severity,
    message,
  });
  const wanted: WantedIssue[] = [];
  if (!facts.hasDescription) wanted.push(issue('MISSING_DESCRIPTION', 'WARNING', productId, 'The product has no description.'));
  for (const { variantId, barcode } of facts.variants) {
    if (barcode !== null && !isValidGtin(barcode)) {
      wanted.push(
        issue(
          'INVALID_BARCODE',
          'ERROR',
          variantId,
          `Barcode "${barcode}" of variant ${variantId} is not a valid GTIN-8, -12, -13 or -14.`,
        ),
      );
    }
  }
  if (score < LOW_QUALITY_THRESHOLD) {
    wanted.push(issue('LOW_QUALITY_SCORE', 'WARNING', productId, `Quality score ${score} is below ${LOW_QUALITY_THRESHOLD}.`));
  }
  return wanted;
};

const assess = ({ data: { productId, change }, metadata }: AssessCatalogChange, state: ProductQuality): ProductQualityEvent[] => {
  const before = state.facts ?? undefined;
  const after = factsAfter(change, before);
  if (!before && !after) return [];
  const requiredAttributeIds = after ? requirementsAfter(change, state.requiredAttributeIds) : null;
  const score = after ? qualityScore(after, after.templateId ? (requiredAttributeIds ?? undefined) : undefined) : 0;
  const still = new Set(skuUses(after));
  const releasedSkus = [...new Set(skuUses(before))].filter((sku) => !still.has(sku));
  const assessed: ProductQualityAssessed = {
    type: 'ProductQualityAssessed',
    data: { qualityId: productId, productId, deleted: !after, score, releasedSkus, requiredAttributeIds, ...(after ?? noFacts) },
  };
  const namespace = qualityNamespaceOf(metadata.tenantId, metadata.orgId);
  return [assessed, ...reconcileIssues(productId, state.open, after ? localIssues(namespace, productId, after, score) : [])];
};

export const decide = (command: ProductQualityCommand, state: ProductQuality): ProductQualityEvent[] => {
  switch (command.type) {
    case 'AssessCatalogChange':
      return assess(command, state);
    default: {
      const exhaustive: never = command.type;
      throw new Error(`unknown command ${String(exhaustive)}`);
    }
  }
};

export const productQualityDecider: Decider<ProductQualityCommand, ProductQualityEvent, ProductQuality> = { initialState, evolve, decide };

const judged: ReadonlySet<string> = new Set<ProductEvent['type']>([
  'ProductCreated',
  'ProductUpdated',
  'ProductDeleted',
  'VariantAdded',
  'MediaAdded',
]);

/** What a product's quality aggregate is asked to judge of one of the product's events. */
export const assessmentsOf = (change: ProductEvent): CommandInput<ProductQualityCommand>[] =>
  judged.has(change.type) ? [{ type: 'AssessCatalogChange', data: { productId: change.data.productId, change } }] : [];

/** One per product, decided by the product processor from the product's events: the issues that depend on the product alone, and its score. */
export const productQualityAggregate = defineAggregate({
  name: 'product-quality',
  stream: 'quality.product',
  decider: productQualityDecider,
  id: 'productId',
  events: { namespace: 'commerce.ledger.quality', types: ['ProductQualityAssessed', 'ValidationIssueRaised', 'ValidationIssueResolved'] },
});
