import { RecentlyUsed } from '../../ledger/recently-used.ts';
import { uuidv5 } from '../../ledger/uuid-v5.ts';
import type { Event } from '../../ledger/message.ts';

/**
 * What every data-quality aggregate shares: the issue types, their events, and issue ids that are the same
 * whichever aggregate raises them: UUIDv5 of the tenant and org's namespace, the issue type and its subject.
 */
const QUALITY_NAMESPACE = 'c4a1e6f2-7b0d-4d1e-8f3a-5e2b9c7d1a44';
// Kept per owner: each product write asked for it twice (its quality and its SKU's usage), a fifth of the processor
// thread's hashing in a bulk import.
const namespaces = new RecentlyUsed<string>(1_000);
export const qualityNamespaceOf = (tenantId: string, orgId: string): string => {
  const owner = `${tenantId}/${orgId}`;
  let namespace = namespaces.get(owner);
  if (namespace === undefined) {
    namespace = uuidv5(owner, QUALITY_NAMESPACE);
    namespaces.set(owner, namespace);
  }
  return namespace;
};
export const issueIdOf = (namespace: string, issueType: IssueType, subject: string): string => uuidv5(`${issueType}/${subject}`, namespace);

export type IssueType = 'MISSING_DESCRIPTION' | 'DUPLICATE_SKU' | 'INVALID_BARCODE' | 'LOW_QUALITY_SCORE';
export type Severity = 'WARNING' | 'ERROR';

/** `qualityId`: the aggregate that decided it (a product's quality: the product id; an SKU's usage: its id). */
export type ValidationIssueRaised = Event<
  'ValidationIssueRaised',
  { qualityId: string; issueId: string; productId: string; issueType: IssueType; severity: Severity; message: string }
>;
export type ValidationIssueResolved = Event<'ValidationIssueResolved', { qualityId: string; issueId: string; productId: string }>;

export type WantedIssue = { issueId: string; productId: string; issueType: IssueType; severity: Severity; message: string };
type OpenIssue = { message: string; productId: string };

/** The events that take the open issues to the wanted ones: resolve what is no longer wanted, raise what is new or changed. */
export function reconcileIssues(
  qualityId: string,
  open: Record<string, OpenIssue>,
  wanted: WantedIssue[],
): (ValidationIssueRaised | ValidationIssueResolved)[] {
  const wantedIds = new Set(wanted.map((w) => w.issueId));
  const resolved = Object.entries(open)
    .filter(([issueId]) => !wantedIds.has(issueId))
    .map(([issueId, { productId }]): ValidationIssueResolved => ({
      type: 'ValidationIssueResolved',
      data: { qualityId, issueId, productId },
    }));
  const raised = wanted
    .filter((w) => open[w.issueId]?.message !== w.message)
    .map((w): ValidationIssueRaised => ({ type: 'ValidationIssueRaised', data: { qualityId, ...w } }));
  return [...resolved, ...raised];
}

/** Open issues after a raise or a resolve (both aggregates keep them the same way). */
export function evolveOpenIssues(
  open: Record<string, OpenIssue>,
  event: ValidationIssueRaised | ValidationIssueResolved,
): Record<string, OpenIssue> {
  if (event.type === 'ValidationIssueRaised')
    return { ...open, [event.data.issueId]: { productId: event.data.productId, message: event.data.message } };
  const { [event.data.issueId]: _resolved, ...rest } = open;
  return rest;
}
