import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * How a notice webhook proves where it comes from (docs/decisions.md, "Export completion notices"): the Standard
 * Webhooks header names, with the signed content the issue asks for (`<timestamp>.<raw body>`, as Stripe signs it) and
 * a hex HMAC-SHA256 keyed by the tenant's secret (its UTF-8 bytes, as given).
 */
export const webhookHeaderNames = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' } as const;
export const WEBHOOK_SIGNATURE_VERSION = 'v1';
/** How far a notice's timestamp may be from the receiver's clock, either way, by default. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const TIMESTAMP = /^\d{1,12}$/;

/** `v1=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`, the value of the signature header. */
export function webhookSignature(secret: string, timestamp: number, rawBody: string | Uint8Array): string {
  const hmac = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
  return `${WEBHOOK_SIGNATURE_VERSION}=${hmac}`;
}

/** The headers of one delivery attempt: the id stays, the timestamp and signature are made afresh. */
export function webhookNoticeHeaders(secret: string, id: string, rawBody: string, timestamp: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    [webhookHeaderNames.id]: id,
    [webhookHeaderNames.timestamp]: String(timestamp),
    [webhookHeaderNames.signature]: webhookSignature(secret, timestamp, rawBody),
  };
}

/** Request headers as `fetch` (a `Headers`) or `node:http` (an object, names in any case) gives them. */
export type ReceivedHeaders = Headers | Record<string, string | string[] | undefined>;

function headerOf(headers: ReceivedHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
  const value = entry?.[1];
  return Array.isArray(value) ? value.join(' ') : value;
}

const sameText = (a: string, b: string) => {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Whether a notice is authentic and fresh: its timestamp within `toleranceSeconds` of `nowSeconds`, and one of the
 * space-separated `v1=` signatures (several while a secret rotates) the HMAC of `<timestamp>.<raw body>`. Verify the
 * body's bytes as received, before parsing them.
 */
export function verifyWebhookNotice(
  secret: string,
  headers: ReceivedHeaders,
  rawBody: string | Uint8Array,
  toleranceSeconds: number = DEFAULT_TOLERANCE_SECONDS,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): boolean {
  const timestamp = headerOf(headers, webhookHeaderNames.timestamp)?.trim();
  const signatures = headerOf(headers, webhookHeaderNames.signature);
  if (!timestamp || !TIMESTAMP.test(timestamp) || !signatures) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
  const expected = webhookSignature(secret, Number(timestamp), rawBody);
  // Every candidate is compared, so the time taken does not tell which one matched.
  return signatures
    .split(/[\s,]+/)
    .map((candidate) => sameText(candidate, expected))
    .reduce((any, match) => any || match, false);
}
