import { createHmac, randomBytes } from 'node:crypto';
import { nativeDeliverySignature, type NATIVE_DELIVERY_TYPES } from '../../http/unified-native-delivery.ts';

/** A native delivery the stand-in is asked to send: the objects, their type and event, and how Unified labels the batch. */
export type NativeDeliveryRequest = {
  objectType: string;
  event: 'created' | 'updated' | 'deleted';
  data: Record<string, unknown>[];
  type?: (typeof NATIVE_DELIVERY_TYPES)[number];
  /** Sent instead of the true signature (a forged delivery). */
  sig256?: string;
  /** The same nonce again (a redelivery of the same body); a fresh one otherwise, as Unified's retries may carry. */
  nonce?: string;
};

/**
 * The body Unified.to posts to a webhook's hook URL: `{ data, webhook, nonce, sig, sig256, type, external_xref }`, signed
 * with the workspace secret (`sig` HMAC-SHA1 in base64, deprecated; `sig256` HMAC-SHA256, see http/unified-native-delivery.ts).
 */
export function deliveryBody(
  workspaceSecret: string,
  webhook: Record<string, unknown>,
  request: NativeDeliveryRequest,
): Record<string, unknown> {
  const nonce = request.nonce ?? randomBytes(12).toString('hex');
  const sig = createHmac('sha1', workspaceSecret)
    .update(JSON.stringify(request.data) + nonce)
    .digest('base64');
  return {
    data: request.data,
    webhook,
    nonce,
    sig,
    sig256: request.sig256 ?? nativeDeliverySignature(workspaceSecret, request.data, nonce),
    type: request.type ?? 'VIRTUAL',
  };
}
