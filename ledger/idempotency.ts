import { ConflictError } from './errors.ts';
import type { CommandMetadata } from './message.ts';

/**
 * Retryable requests (the `Idempotency-Key` header), decided by each aggregate's single writer: its snapshot
 * remembers the requests it accepted, so a retry is accepted again with nothing new, in order with every other
 * command of the aggregate, however many copies arrive at once.
 */

/** How long an aggregate remembers a request. A retry after that is decided afresh (a create then meets its own record: 409). */
export const KEY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** By key: the hash of the accepted request and when it was issued (`issuedAt`, the edge's clock, as for every decision). */
export type RememberedRequests = Record<string, { hash: string; at: number }>;

const unexpired = (at: number, now: number): boolean => now - at < KEY_RETENTION_MS;

/**
 * Whether the command repeats a request the aggregate has accepted. The same key with another request is refused
 * rather than answered with the original: the client reused a key, and the original answer would hide that.
 */
export function isReplay(requests: RememberedRequests | undefined, { idempotency, issuedAt }: CommandMetadata): boolean {
  const remembered = idempotency && requests?.[idempotency.key];
  if (!idempotency || !remembered || !unexpired(remembered.at, issuedAt)) return false;
  if (remembered.hash === idempotency.requestHash) return true;
  throw new ConflictError('the Idempotency-Key was already used with a different request', [
    { path: 'headers.idempotency-key', message: 'already used with a different request' },
  ]);
}

/**
 * What an aggregate that accepted the command keeps: this request added, expired ones dropped (so aggregates
 * that take many creates, one per tenant, stay bounded), and no field at all when nothing remains.
 */
export function rememberRequest(
  requests: RememberedRequests | undefined,
  { idempotency, issuedAt }: CommandMetadata,
): { requests?: RememberedRequests } {
  const kept = Object.entries(requests ?? {}).filter(([, { at }]) => unexpired(at, issuedAt));
  if (idempotency) kept.push([idempotency.key, { hash: idempotency.requestHash, at: issuedAt }]);
  return kept.length > 0 ? { requests: Object.fromEntries(kept) } : {};
}
