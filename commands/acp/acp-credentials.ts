import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * What an agent platform needs to call a tenant's checkout: a bearer API key that names the tenant's org, and a secret
 * it signs each request with. Neither enters the log: both derive from the service's WEBHOOK_SECRET_KEY and the
 * tenant's webhook secret version, as the notice secret does (commands/integrations/webhook-secret.ts), so they rotate
 * with it and the previous version keeps working for its grace period.
 */
const derive = (key: string, label: string, tenantId: string, orgId: string, version: number): string =>
  createHmac('sha256', key).update(`${label}:${tenantId}/${orgId}/${version}`).digest('base64url');

/** `webhookSecret`: what signs the order events we post to the agent platform (`Merchant-Signature`). */
export type AcpCredentials = { apiKey: string; signingSecret: string; webhookSecret: string };

export const acpCredentialsOf = (key: string, tenantId: string, orgId: string, version: number): AcpCredentials => ({
  apiKey: `acp_${derive(key, 'acp-api-key', tenantId, orgId, version)}`,
  signingSecret: `acpsig_${derive(key, 'acp-signing', tenantId, orgId, version)}`,
  webhookSecret: `acpwh_${derive(key, 'acp-webhook', tenantId, orgId, version)}`,
});

/** ACP's `Merchant-Signature` of an order event: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export const merchantSignature = (secret: string, timestamp: number, body: string): string =>
  `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;

/**
 * The `Signature` header of an agent's request: base64url of HMAC-SHA256, keyed with the signing secret, over
 * `<Timestamp header>.<METHOD>.<path>.<raw body>`. The method and path bind a signature to the operation and the
 * session, the timestamp to a moment (we accept ±5 minutes), the raw bytes to exactly what was sent.
 */
export const requestSignature = (secret: string, timestamp: string, method: string, path: string, body: string): string =>
  createHmac('sha256', secret).update(`${timestamp}.${method.toUpperCase()}.${path}.${body}`).digest('base64url');

export const SIGNATURE_SKEW_MS = 5 * 60 * 1000;

/** Timing-safe equality of two texts (a different length is simply false). */
export const sameText = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};
