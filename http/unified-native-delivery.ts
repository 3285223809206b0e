import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * Unified.to's own webhook delivery: `{ data: [objects…], webhook: { connection_id, object_type, event, … }, nonce, sig,
 * sig256, type, external_xref }`, signed in the body with the workspace secret. Unified documents the signature as
 * `HMAC(workspace.secret, data + nonce)` without saying how `data` is serialized or the digest encoded; we decided (see
 * docs/decisions.md "Unified's native deliveries"): `data` as JSON.stringify writes it (no spaces), then the nonce, and
 * `sig256` is the SHA-256 digest in base64 or in hex (both are taken). `sig` (SHA-1, deprecated) is not relied on.
 */

export const NATIVE_DELIVERY_TYPES = ['INITIAL-PARTIAL', 'INITIAL-COMPLETE', 'VIRTUAL', 'NATIVE'] as const;
/** Objects in one delivery at most: Unified pages its deliveries; a bounded batch keeps one request's work bounded. */
export const MAX_NATIVE_DELIVERY_OBJECTS = 500;

export const nativeDelivery = z.looseObject({
  data: z.array(z.record(z.string(), z.unknown())).max(MAX_NATIVE_DELIVERY_OBJECTS),
  webhook: z.looseObject({
    connection_id: z.string().trim().min(1).max(255),
    object_type: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be an object type such as accounting_order'),
    event: z.enum(['created', 'updated', 'deleted']),
    id: z.string().max(255).optional(),
  }),
  nonce: z.string().min(1).max(1024),
  sig256: z.string().max(512),
  sig: z.string().max(512).optional(),
  type: z.enum(NATIVE_DELIVERY_TYPES).optional(),
  external_xref: z.string().max(1024).optional(),
});
export type NativeDelivery = z.infer<typeof nativeDelivery>;

/** Told apart from the spec's envelope by its shape: a `data` array and a `webhook` object. */
export const looksNative = (json: unknown): boolean =>
  typeof json === 'object' &&
  json !== null &&
  Array.isArray((json as { data?: unknown }).data) &&
  typeof (json as { webhook?: unknown }).webhook === 'object';

const digest = (secret: string, data: unknown[], nonce: string): Buffer =>
  createHmac('sha256', secret)
    .update(JSON.stringify(data) + nonce)
    .digest();

/** `sig256` as the stand-in (and, by our reading, Unified) writes it: base64. */
export const nativeDeliverySignature = (secret: string, data: unknown[], nonce: string): string =>
  digest(secret, data, nonce).toString('base64');

/** Constant-time check of `sig256`, given in base64 or hex, against the workspace secret. */
export function verifiesNative(secret: string, data: unknown[], nonce: string, sig256: string): boolean {
  const expected = digest(secret, data, nonce);
  const given = /^[0-9a-fA-F]{64}$/.test(sig256) ? Buffer.from(sig256, 'hex') : Buffer.from(sig256, 'base64');
  const comparable = given.length === expected.length ? given : Buffer.alloc(expected.length);
  return timingSafeEqual(comparable, expected) && given.length === expected.length;
}

/** Our inbox's event kind for a native object: `accounting_order` + `created` → `accounting.order.created`. */
export const nativeEventKind = (objectType: string, event: string): string => `${objectType.replace(/_/g, '.')}.${event}`;
