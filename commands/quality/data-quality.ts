import { v5 as uuidv5 } from 'uuid';
import type { ProductEvent } from '../catalog/product.ts';
import type { TemplateCreated } from '../catalog/taxonomy.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';
import { isValidGtin } from './gtin.ts';
import { isBlank as blank, filledAttributeIds, LOW_QUALITY_THRESHOLD, qualityScore, type ProductFacts, type VariantFacts } from './quality-score.ts';

/**
 * The data quality of one tenant and org's catalog. One aggregate per (tenant, org) because a duplicate
 * SKU spans products: its state holds every product's facts, so the issues it raises depend only on
 * the order of its own commands, and a replay converges on the same issues.
 */
const QUALITY_NAMESPACE = 'c4a1e6f2-7b0d-4d1e-8f3a-5e2b9c7d1a44';
export const qualityIdOf = (tenantId: string, orgId: string): string => uuidv5(`${tenantId}/${orgId}`, QUALITY_NAMESPACE);
export const issueIdOf = (qualityId: string, issueType: IssueType, subject: string): string => uuidv5(`${issueType}/${subject}`, qualityId);

export type IssueType = 'MISSING_DESCRIPTION' | 'DUPLICATE_SKU' | 'INVALID_BARCODE' | 'LOW_QUALITY_SCORE';
export type Severity = 'WARNING' | 'ERROR';

// ── Events ──────────────────────────────────────────────────────────────────
export type ProductQualityAssessed = Event<
  'ProductQualityAssessed',
  { qualityId: string; productId: string; deleted: boolean; score: number } & ProductFacts
>;
export type ValidationIssueRaised = Event<
  'ValidationIssueRaised',
  { qualityId: string; issueId: string; productId: string; issueType: IssueType; severity: Severity; message: string }
>;
export type ValidationIssueResolved = Event<'ValidationIssueResolved', { qualityId: string; issueId: string; productId: string }>;

/** A template's required attributes, which the quality score of its products depends on. */
export type TemplateRequirementsNoted = Event<'TemplateRequirementsNoted', { qualityId: string; templateId: string; requiredAttributeIds: string[] }>;

export type QualityEvent = ProductQualityAssessed | ValidationIssueRaised | ValidationIssueResolved | TemplateRequirementsNoted;

// ── State ───────────────────────────────────────────────────────────────────
type OpenIssue = { productId: string; issueType: IssueType; message: string };
/** `templates`: each known template's required attribute ids (absent in snapshots taken before it existed). */
export type DataQuality = { products: Record<string, ProductFacts>; open: Record<string, OpenIssue>; templates?: Record<string, string[]> };

export const initialState = (): DataQuality => ({ products: {}, open: {}, templates: {} });

/** A copy without one key. (Rest destructuring would do, but V8 makes it slow for records this large.) */
const without = <T>(record: Record<string, T>, key: string): Record<string, T> => {
  const copy = { ...record };
  delete copy[key];
  return copy;
};

export const evolve = (state: DataQuality, event: QualityEvent): DataQuality => {
  switch (event.type) {
    case 'ProductQualityAssessed': {
      const { productId, deleted, sku, hasDescription, hasCategory, hasBrand, hasMedia, variants } = event.data;
      // Events written before products carried templates and attribute values lack them.
      const { templateId = null, filledAttributeIds: filled = [] } = event.data;
      const facts: ProductFacts = { sku, hasDescription, hasCategory, hasBrand, hasMedia, variants, templateId, filledAttributeIds: filled };
      return { ...state, products: deleted ? without(state.products, productId) : { ...state.products, [productId]: facts } };
    }
    case 'TemplateRequirementsNoted':
      return { ...state, templates: { ...state.templates, [event.data.templateId]: event.data.requiredAttributeIds } };
    case 'ValidationIssueRaised': {
      const { issueId, productId, issueType, message } = event.data;
      return { ...state, open: { ...state.open, [issueId]: { productId, issueType, message } } };
    }
    case 'ValidationIssueResolved':
      return { ...state, open: without(state.open, event.data.issueId) };
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
/** A catalog event, forwarded by the validation router (consumers/validation-route.ts). */
export type AssessCatalogChange = Command<
  'AssessCatalogChange',
  { qualityId: string; change: ProductEvent | Pick<TemplateCreated, 'type' | 'data'> }
>;
export type QualityCommand = AssessCatalogChange;

// ── Decide ──────────────────────────────────────────────────────────────────
/** The product's facts after the change; undefined once it is gone (or if the change is about a product never seen). */
const factsAfter = (change: ProductEvent, before: ProductFacts | undefined): ProductFacts | undefined => {
  switch (change.type) {
    case 'ProductCreated': {
      const { description, category, sku = null, brand = null, templateId = null, attributes = {} } = change.data;
      return {
        sku,
        hasDescription: !blank(description),
        hasCategory: !blank(category),
        hasBrand: !blank(brand),
        hasMedia: false,
        variants: [],
        templateId,
        filledAttributeIds: filledAttributeIds(attributes),
      };
    }
    case 'ProductUpdated': {
      if (!before) return undefined;
      // Snapshots taken before products carried templates and attribute values lack them.
      const next = { ...before, templateId: before.templateId ?? null, filledAttributeIds: before.filledAttributeIds ?? [] };
      for (const { field, current } of change.data.changes) {
        if (field === 'description') next.hasDescription = !blank(current);
        if (field === 'category') next.hasCategory = !blank(current);
        if (field === 'brand') next.hasBrand = !blank(current);
        if (field === 'sku') next.sku = current;
        if (field === 'templateId') next.templateId = current;
      }
      const changed = change.data.attributeChanges ?? [];
      if (changed.length > 0) {
        const filled = new Set(next.filledAttributeIds);
        for (const { attributeId, current } of changed) {
          if (blank(current)) filled.delete(attributeId);
          else filled.add(attributeId);
        }
        next.filledAttributeIds = [...filled];
      }
      return next;
    }
    case 'VariantAdded': {
      if (!before) return undefined;
      const { variantId, sku, barcode, price } = change.data;
      const variant: VariantFacts = { variantId, sku, barcode, priced: price !== null };
      return { ...before, variants: [...before.variants.filter((v) => v.variantId !== variantId), variant] };
    }
    case 'MediaAdded':
      return before && { ...before, hasMedia: true };
    case 'ProductDeleted':
      return undefined;
    default: {
      const exhaustive: never = change;
      return exhaustive;
    }
  }
};

type Wanted = { issueId: string; productId: string; issueType: IssueType; severity: Severity; message: string };

/** Every SKU a product uses, its own and its variants', once per use. */
const skuUses = (facts: ProductFacts | undefined): string[] =>
  facts ? [facts.sku, ...facts.variants.map((v) => v.sku)].flatMap((sku) => (sku === null ? [] : [sku])) : [];
const skusOf = (facts: ProductFacts | undefined) => new Set(skuUses(facts));

/** Every issue a product should have open, given the whole catalog (for duplicate SKUs). */
type Templates = Record<string, string[]>;
const requiredFor = (facts: ProductFacts, templates: Templates): string[] | undefined =>
  facts.templateId ? templates[facts.templateId] : undefined;
const scoreOf = (facts: ProductFacts, templates: Templates) => qualityScore(facts, requiredFor(facts, templates));

/** Who uses each of the given SKUs: a product id once per use (a product using an SKU twice is listed twice). */
type Holders = Map<string, string[]>;
const holdersOf = (skus: ReadonlySet<string>, products: Record<string, ProductFacts>): Holders => {
  const holders: Holders = new Map();
  if (skus.size === 0) return holders;
  const hold = (sku: string | null, productId: string) => {
    if (sku !== null && skus.has(sku)) holders.set(sku, [...(holders.get(sku) ?? []), productId]);
  };
  for (const [productId, facts] of Object.entries(products)) {
    hold(facts.sku, productId);
    for (const variant of facts.variants) hold(variant.sku, productId);
  }
  return holders;
};

const wantedIssues = (qualityId: string, productId: string, facts: ProductFacts, holders: Holders, templates: Templates): Wanted[] => {
  const issue = (issueType: IssueType, severity: Severity, subject: string, message: string): Wanted => ({
    issueId: issueIdOf(qualityId, issueType, subject),
    productId,
    issueType,
    severity,
    message,
  });
  const wanted: Wanted[] = [];
  if (!facts.hasDescription) wanted.push(issue('MISSING_DESCRIPTION', 'WARNING', productId, 'The product has no description.'));
  for (const sku of skusOf(facts)) {
    const users = holders.get(sku) ?? [];
    if (users.length > 1) {
      const others = [...new Set(users.filter((id) => id !== productId))];
      const where = others.length > 0 ? `also used by product ${others.join(', ')}` : 'used more than once in this product';
      wanted.push(issue('DUPLICATE_SKU', 'ERROR', `${productId}/${sku}`, `SKU "${sku}" is ${where}.`));
    }
  }
  for (const { variantId, barcode } of facts.variants) {
    if (barcode !== null && !isValidGtin(barcode)) {
      wanted.push(issue('INVALID_BARCODE', 'ERROR', variantId, `Barcode "${barcode}" of variant ${variantId} is not a valid GTIN-8, -12, -13 or -14.`));
    }
  }
  const score = scoreOf(facts, templates);
  if (score < LOW_QUALITY_THRESHOLD) {
    wanted.push(issue('LOW_QUALITY_SCORE', 'WARNING', productId, `Quality score ${score} is below ${LOW_QUALITY_THRESHOLD}.`));
  }
  return wanted;
};

/** Resolves the open issues of the affected products that are no longer wanted, and raises the new or changed ones. */
const reconcile = (qualityId: string, state: DataQuality, products: Record<string, ProductFacts>, templates: Templates, affected: Set<string>): QualityEvent[] => {
  const holders = holdersOf(new Set([...affected].flatMap((id) => skuUses(products[id]))), products);
  const wanted = [...affected].flatMap((id) => (products[id] ? wantedIssues(qualityId, id, products[id], holders, templates) : []));
  const wantedIds = new Set(wanted.map((w) => w.issueId));
  const resolved = Object.entries(state.open)
    .filter(([issueId, open]) => affected.has(open.productId) && !wantedIds.has(issueId))
    .map(([issueId, open]): QualityEvent => ({ type: 'ValidationIssueResolved', data: { qualityId, issueId, productId: open.productId } }));
  const raised = wanted
    .filter((w) => state.open[w.issueId]?.message !== w.message)
    .map((w): QualityEvent => ({ type: 'ValidationIssueRaised', data: { qualityId, ...w } }));
  return [...resolved, ...raised];
};

/**
 * A template's requirements, noted once (templates are create-only), and the products already following it
 * judged again: the router reads templates and products from different topics, so either may come first.
 */
const noteTemplate = (qualityId: string, { templateId, requiredAttributeIds }: TemplateCreated['data'], state: DataQuality): QualityEvent[] => {
  const templates = { ...state.templates, [templateId]: requiredAttributeIds };
  const followers = Object.entries(state.products).filter(([, facts]) => facts.templateId === templateId);
  const noted: QualityEvent = { type: 'TemplateRequirementsNoted', data: { qualityId, templateId, requiredAttributeIds } };
  const assessed = followers.map(
    ([productId, facts]): QualityEvent => ({
      type: 'ProductQualityAssessed',
      data: { qualityId, productId, deleted: false, score: scoreOf(facts, templates), ...facts },
    }),
  );
  return [noted, ...assessed, ...reconcile(qualityId, state, state.products, templates, new Set(followers.map(([id]) => id)))];
};

const assess = ({ data: { qualityId, change } }: AssessCatalogChange, state: DataQuality): QualityEvent[] => {
  if (change.type === 'TemplateCreated') return noteTemplate(qualityId, change.data, state);
  const templates = state.templates ?? {};
  const { productId } = change.data;
  const before = state.products[productId];
  const after = factsAfter(change, before);
  if (!before && !after) return [];
  const products = { ...state.products };
  if (after) products[productId] = after;
  else delete products[productId];

  // The changed product, and every product that shares an SKU it had or has: their duplicate issues may change.
  const skus = new Set([...skuUses(before), ...skuUses(after)]);
  const affected = new Set([productId, ...[...holdersOf(skus, products).values()].flat()]);
  const gone: ProductFacts = { sku: null, hasDescription: false, hasCategory: false, hasBrand: false, hasMedia: false, variants: [], templateId: null, filledAttributeIds: [] };
  const assessed: QualityEvent = {
    type: 'ProductQualityAssessed',
    data: { qualityId, productId, deleted: !after, score: after ? scoreOf(after, templates) : 0, ...(after ?? gone) },
  };
  return [assessed, ...reconcile(qualityId, state, products, templates, affected)];
};

export const decide = (command: QualityCommand, state: DataQuality): QualityEvent[] => {
  switch (command.type) {
    case 'AssessCatalogChange':
      return assess(command, state);
    default: {
      const exhaustive: never = command.type;
      throw new Error(`unknown command ${String(exhaustive)}`);
    }
  }
};

export const dataQualityDecider: Decider<QualityCommand, QualityEvent, DataQuality> = { initialState, evolve, decide };
