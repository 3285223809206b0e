import { uuidv5 } from '../../ledger/uuid-v5.ts';
import { defineAggregate } from '../../ledger/aggregate.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';
import {
  evolveOpenIssues,
  issueIdOf,
  qualityNamespaceOf,
  reconcileIssues,
  type ValidationIssueRaised,
  type ValidationIssueResolved,
  type WantedIssue,
} from './validation-issue.ts';

/**
 * Who uses one SKU in one tenant and org: one aggregate per SKU (UUIDv5 of tenant, org and SKU), fed by the SKU
 * router from the product quality assessments. It raises DUPLICATE_SKU on every product that shares the SKU,
 * and resolves them all once only one use is left.
 */
const SKU_USAGE_NAMESPACE = '7d3f0a52-1c9e-4b6a-a8d1-3e5f7b9c2d10';
export const skuUsageIdOf = (tenantId: string, orgId: string, sku: string): string =>
  uuidv5(`${tenantId}/${orgId}/${sku}`, SKU_USAGE_NAMESPACE);

// ── Events ──────────────────────────────────────────────────────────────────
/** How many times a product uses the SKU now (its own SKU and its variants'); 0 once it no longer does. */
export type SkuUsesCounted = Event<'SkuUsesCounted', { qualityId: string; sku: string; productId: string; uses: number }>;
export type SkuUsageEvent = SkuUsesCounted | ValidationIssueRaised | ValidationIssueResolved;

// ── State ───────────────────────────────────────────────────────────────────
export type SkuUsage = { uses: Record<string, number>; open: Record<string, { productId: string; message: string }> };

export const initialState = (): SkuUsage => ({ uses: {}, open: {} });

export const evolve = (state: SkuUsage, event: SkuUsageEvent): SkuUsage => {
  switch (event.type) {
    case 'SkuUsesCounted': {
      const { [event.data.productId]: _before, ...others } = state.uses;
      return { ...state, uses: event.data.uses > 0 ? { ...others, [event.data.productId]: event.data.uses } : others };
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
export type CountSkuUses = Command<'CountSkuUses', { skuUsageId: string; sku: string; productId: string; uses: number }>;
export type SkuUsageCommand = CountSkuUses;

// ── Decide ──────────────────────────────────────────────────────────────────
const duplicates = (namespace: string, sku: string, uses: Record<string, number>): WantedIssue[] => {
  const users = Object.keys(uses);
  const total = Object.values(uses).reduce((a, b) => a + b, 0);
  if (total < 2) return [];
  return users.map((productId) => {
    const others = users.filter((id) => id !== productId);
    const where = others.length > 0 ? `also used by product ${others.join(', ')}` : 'used more than once in this product';
    return {
      issueId: issueIdOf(namespace, 'DUPLICATE_SKU', `${productId}/${sku}`),
      productId,
      issueType: 'DUPLICATE_SKU',
      severity: 'ERROR',
      message: `SKU "${sku}" is ${where}.`,
    };
  });
};

const count = ({ data, metadata }: CountSkuUses, state: SkuUsage): SkuUsageEvent[] => {
  const { skuUsageId, sku, productId, uses } = data;
  if ((state.uses[productId] ?? 0) === uses) return [];
  const counted: SkuUsesCounted = { type: 'SkuUsesCounted', data: { qualityId: skuUsageId, sku, productId, uses } };
  const after = evolve(state, counted);
  return [
    counted,
    ...reconcileIssues(skuUsageId, state.open, duplicates(qualityNamespaceOf(metadata.tenantId, metadata.orgId), sku, after.uses)),
  ];
};

export const decide = (command: SkuUsageCommand, state: SkuUsage): SkuUsageEvent[] => {
  switch (command.type) {
    case 'CountSkuUses':
      return count(command, state);
    default: {
      const exhaustive: never = command.type;
      throw new Error(`unknown command ${String(exhaustive)}`);
    }
  }
};

export const skuUsageDecider: Decider<SkuUsageCommand, SkuUsageEvent, SkuUsage> = { initialState, evolve, decide };

/** One per SKU of a tenant and org, fed by the SKU router: duplicate SKUs across and within products. */
export const skuUsageAggregate = defineAggregate({
  name: 'sku-usage',
  stream: 'quality.sku',
  decider: skuUsageDecider,
  id: 'skuUsageId',
  events: { namespace: 'commerce.ledger.quality', types: ['SkuUsesCounted', 'ValidationIssueRaised', 'ValidationIssueResolved'] },
});
