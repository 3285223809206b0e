import { createHash, sign } from 'node:crypto';
import type { UcpSigningKey } from './ucp-signing-key.ts';

/**
 * A business's signature on a REST response (UCP 2026-04-08, "Message Signatures", REST Response Signing): RFC 9421
 * over `@status`, `content-digest` and `content-type`, with `created` and the key's `kid`; the body bound by its RFC 9530
 * `Content-Digest` (SHA-256 of the raw bytes); ECDSA P-256 with the fixed-width `r||s` encoding RFC 9421 asks for.
 * A platform verifies it with the key of that `kid` in the business profile's `signing_keys`.
 */
export const RESPONSE_COMPONENTS = ['@status', 'content-digest', 'content-type'] as const;

/** RFC 9530 `Content-Digest` of the body as sent. */
export const contentDigest = (body: string | Buffer): string => `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;

/** The `sig1` parameters: the components in order, when, and which key. */
export const responseSignatureParams = (created: number, kid: string): string =>
  `(${RESPONSE_COMPONENTS.map((component) => `"${component}"`).join(' ')});created=${created};keyid="${kid}"`;

/** RFC 9421 §2.5 signature base of a response: one line per component, then `@signature-params`. */
export const responseSignatureBase = (status: number, digest: string, contentType: string, params: string): string =>
  [`"@status": ${status}`, `"content-digest": ${digest}`, `"content-type": ${contentType}`, `"@signature-params": ${params}`].join('\n');

export type SignedResponseHeaders = { 'content-digest': string; 'signature-input': string; signature: string };

export function signResponse(
  key: UcpSigningKey,
  status: number,
  body: string | Buffer,
  contentType: string,
  created: number,
): SignedResponseHeaders {
  const digest = contentDigest(body);
  const params = responseSignatureParams(created, key.publicJwk.kid);
  const base = responseSignatureBase(status, digest, contentType, params);
  const signature = sign('sha256', Buffer.from(base), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return { 'content-digest': digest, 'signature-input': `sig1=${params}`, signature: `sig1=:${signature.toString('base64')}:` };
}
