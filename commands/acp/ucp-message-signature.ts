import { createHash, sign } from 'node:crypto';
import type { UcpSigningKey } from './ucp-signing-key.ts';

/**
 * A business's signature on a REST response (UCP 2026-04-08, "Message Signatures", REST Response Signing), and on a
 * request it sends (`signRequest`, below): RFC 9421
 * over `@status`, `content-digest` and `content-type`, with `created` and the key's `kid`; the body bound by its RFC 9530
 * `Content-Digest` (SHA-256 of the raw bytes); ECDSA P-256 with the fixed-width `r||s` encoding RFC 9421 asks for.
 * A platform verifies it with the key of that `kid` in the business profile's `signing_keys`.
 */
export const RESPONSE_COMPONENTS = ['@status', 'content-digest', 'content-type'] as const;

/** RFC 9530 `Content-Digest` of the body as sent. */
export const contentDigest = (body: string | Buffer): string => `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;

const paramsOf = (components: readonly string[], created: number, kid: string): string =>
  `(${components.map((component) => `"${component}"`).join(' ')});created=${created};keyid="${kid}"`;

/** The `sig1` parameters: the components in order, when, and which key. */
export const responseSignatureParams = (created: number, kid: string): string => paramsOf(RESPONSE_COMPONENTS, created, kid);

/** RFC 9421 §2.5 signature base: one line per covered component and its value, in order, then `@signature-params`. */
const signatureBase = (covered: [string, string][], params: string): string =>
  [...covered.map(([component, value]) => `"${component}": ${value}`), `"@signature-params": ${params}`].join('\n');

/** RFC 9421 §2.5 signature base of a response. */
export const responseSignatureBase = (status: number, digest: string, contentType: string, params: string): string =>
  signatureBase(
    [
      ['@status', String(status)],
      ['content-digest', digest],
      ['content-type', contentType],
    ],
    params,
  );

const es256 = (key: UcpSigningKey, base: string): string =>
  sign('sha256', Buffer.from(base), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64');

export type SignatureHeaders = { 'content-digest': string; 'signature-input': string; signature: string };

export function signResponse(
  key: UcpSigningKey,
  status: number,
  body: string | Buffer,
  contentType: string,
  created: number,
): SignatureHeaders {
  const digest = contentDigest(body);
  const params = responseSignatureParams(created, key.publicJwk.kid);
  const base = responseSignatureBase(status, digest, contentType, params);
  return { 'content-digest': digest, 'signature-input': `sig1=${params}`, signature: `sig1=:${es256(key, base)}:` };
}

/**
 * A business's signature on a request it sends (REST Request Signing; UCP's order webhook): `@method`, `@authority`,
 * `@path` (and `@query` when the URL has one) of the target, then the given header fields in the order given (their
 * names lowercase, their values as sent), then `content-digest` and `content-type` of the body; `created` and `kid`.
 */
export function signRequest(
  key: UcpSigningKey,
  request: { method: string; url: string; headers: [string, string][]; body: string | Buffer; contentType: string },
  created: number,
): SignatureHeaders {
  const target = new URL(request.url);
  const digest = contentDigest(request.body);
  const covered: [string, string][] = [
    ['@method', request.method.toUpperCase()],
    // URL.host is lowercase and leaves out the scheme's default port, as RFC 9421 §2.2.3 asks.
    ['@authority', target.host],
    ['@path', target.pathname],
    ...(target.search ? [['@query', target.search] as [string, string]] : []),
    ...request.headers,
    ['content-digest', digest],
    ['content-type', request.contentType],
  ];
  const params = paramsOf(
    covered.map(([component]) => component),
    created,
    key.publicJwk.kid,
  );
  return {
    'content-digest': digest,
    'signature-input': `sig1=${params}`,
    signature: `sig1=:${es256(key, signatureBase(covered, params))}:`,
  };
}
