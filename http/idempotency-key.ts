import { createHash, randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { uuidv5 } from '../ledger/uuid-v5.ts';
import { z } from 'zod';
import type { IdempotentRequest } from '../ledger/message.ts';
import { standardHeaders } from './schemas.ts';

/**
 * The `Idempotency-Key` request header of every create, as in Stripe's API: a retry with the same key and body
 * answers the original record; the key with another body is 409. The aggregate's single writer decides which
 * (ledger/idempotency.ts); the edge makes every retry land on the same aggregate by deriving the new record's id
 * from the key.
 */
export const idempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x20-\x7e]*$/, 'must be printable ASCII characters')
  .describe('Makes the create safe to retry: the same key and body within 24 h answer the original record, another body 409');

export const createHeaders = standardHeaders.extend({ 'idempotency-key': idempotencyKey.optional() });

export type RecordKind =
  | 'product'
  | 'variant'
  | 'media'
  | 'category'
  | 'brand'
  | 'attribute'
  | 'attribute-group'
  | 'template'
  | 'stock-location'
  | 'bulk-job'
  | 'export';

const RECORD_ID_NAMESPACE = '7c5cce73-60b8-4cb0-99f9-64ea44e587bf';

/** Keys sorted at every level, so the hash of a request does not depend on the order of its JSON fields. */
export const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([key, inner]) => [key, canonical(inner)]));
  }
  return value;
};

/**
 * The id of the record a create makes, and, with an Idempotency-Key, what its aggregate remembers of the request.
 * The id is UUIDv5 of tenant, org, kind, key and `within` (the product a variant or media item is added to, whose
 * aggregate holds it), so concurrent retries reach the same single writer. The hash covers the body as validated
 * (trimmed, ids lower-cased, defaults filled in) and the path parameters: "the same body" is the same request once
 * normalized.
 */
export function newRecord(request: FastifyRequest, kind: RecordKind, within?: string): { id: string; idempotency?: IdempotentRequest } {
  const key = request.headers['idempotency-key'];
  if (typeof key !== 'string') return { id: randomUUID() };
  const { tenantId, orgId } = request.principal;
  const id = uuidv5(JSON.stringify([tenantId, orgId, kind, within ?? null, key]), RECORD_ID_NAMESPACE);
  const normalized = JSON.stringify(canonical({ kind, params: request.params, body: request.body }));
  return { id, idempotency: { key: id, requestHash: createHash('sha256').update(normalized).digest('base64url') } };
}
