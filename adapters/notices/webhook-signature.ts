import { Webhook } from 'standardwebhooks';

/**
 * How a notice webhook proves where it comes from: Standard Webhooks (docs/decisions.md, "Export completion notices"),
 * signed by its reference library so that any receiver's Standard Webhooks or Svix library verifies it.
 */
/** The `whsec_` secrets a notice is signed with: at least the current one. */
export type NoticeSecrets = readonly [string, ...string[]];

const webhookHeaderNames = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' } as const;

/**
 * The signature header's value: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">` for each `whsec_` secret,
 * space-separated (the current secret first, then one still in its grace after a rotation).
 */
export function webhookSignature(secrets: NoticeSecrets, id: string, timestamp: number, rawBody: string): string {
  const at = new Date(timestamp * 1000);
  return secrets.map((secret) => new Webhook(secret).sign(id, at, rawBody)).join(' ');
}

/** The headers of one delivery attempt: the id stays, the timestamp and signature are made afresh. */
export function webhookNoticeHeaders(secrets: NoticeSecrets, id: string, rawBody: string, timestamp: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    [webhookHeaderNames.id]: id,
    [webhookHeaderNames.timestamp]: String(timestamp),
    [webhookHeaderNames.signature]: webhookSignature(secrets, id, timestamp, rawBody),
  };
}
