import { createHash, createPublicKey, verify } from 'node:crypto';

type PublicJwk = { kid?: string; kty?: string; crv?: string; x?: string; y?: string };

/**
 * A platform's check of a business's signed REST response, as UCP 2026-04-08 describes it ("REST Response
 * Verification"), written apart from the service's signer: the `sig1` member of `Signature-Input` names the covered
 * components and the `kid`; the key of that `kid` comes from the business profile's `signing_keys`; the body must match
 * `Content-Digest`; the RFC 9421 signature base is rebuilt from the response as received and the `r||s` ES256
 * signature verified. Empty when the response verifies.
 */
export type SignedAnswer = { status: number; headers: Headers; raw: string };

export function ucpResponseSignatureProblems(answer: SignedAnswer, signingKeys: PublicJwk[]): string[] {
  const input = answer.headers.get('signature-input') ?? '';
  const match = /^sig1=\(([^)]*)\)((?:;[a-z]+=(?:"[^"]*"|\d+))*)$/.exec(input);
  if (!match) return [`Signature-Input ${JSON.stringify(input)} is not one sig1 member`];
  const components = [...(match[1] ?? '').matchAll(/"([^"]+)"/g)].map((m) => m[1] as string);
  const kid = /;keyid="([^"]*)"/.exec(match[2] ?? '')?.[1];
  const problems: string[] = [];
  for (const required of ['@status', 'content-digest', 'content-type'])
    if (!components.includes(required)) problems.push(`the signature does not cover ${required}`);
  const key = signingKeys.find((candidate) => candidate.kid === kid);
  if (!key) return [...problems, `key_not_found: no signing key ${String(kid)} in the profile`];
  const digest = `sha-256=:${createHash('sha256').update(answer.raw).digest('base64')}:`;
  if (answer.headers.get('content-digest') !== digest) problems.push('digest_mismatch: Content-Digest is not the body’s');
  const valueOf = (component: string) => (component === '@status' ? String(answer.status) : (answer.headers.get(component) ?? ''));
  const base = [
    ...components.map((component) => `"${component}": ${valueOf(component)}`),
    `"@signature-params": ${input.slice('sig1='.length)}`,
  ].join('\n');
  const signature = /^sig1=:([A-Za-z0-9+/=]+):$/.exec(answer.headers.get('signature') ?? '')?.[1];
  if (!signature) return [...problems, 'Signature is not one sig1 byte sequence'];
  const publicKey = createPublicKey({ key: key as never, format: 'jwk' });
  if (!verify('sha256', Buffer.from(base), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64')))
    problems.push('signature_invalid');
  return problems;
}

/** A request as its receiver got it: method, the URL it was sent to (the receiver's own host and path), headers, raw body. */
export type SignedRequest = { method: string; url: string; headers: Record<string, string | string[] | undefined>; raw: string };

/**
 * A platform's check of a business's signed request (an order event webhook), as UCP 2026-04-08 describes it ("REST
 * Request Verification"): the covered components must include those its signing table requires of a POST with a body
 * and `UCP-Agent` (`@method`, `@authority`, `@path`, `ucp-agent`, `idempotency-key`, `content-digest`, `content-type`);
 * the key of the `kid` comes from the business profile's `signing_keys`; the body must match `Content-Digest`; the
 * RFC 9421 signature base is rebuilt from the request as received and the `r||s` ES256 signature verified.
 */
export function ucpRequestSignatureProblems(request: SignedRequest, signingKeys: PublicJwk[]): string[] {
  const header = (name: string): string => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(', ') : (value ?? '');
  };
  const input = header('signature-input');
  const match = /^sig1=\(([^)]*)\)((?:;[a-z]+=(?:"[^"]*"|\d+))*)$/.exec(input);
  if (!match) return [`Signature-Input ${JSON.stringify(input)} is not one sig1 member`];
  const components = [...(match[1] ?? '').matchAll(/"([^"]+)"/g)].map((m) => m[1] as string);
  const kid = /;keyid="([^"]*)"/.exec(match[2] ?? '')?.[1];
  const problems: string[] = [];
  for (const required of ['@method', '@authority', '@path', 'ucp-agent', 'idempotency-key', 'content-digest', 'content-type'])
    if (!components.includes(required)) problems.push(`the signature does not cover ${required}`);
  const key = signingKeys.find((candidate) => candidate.kid === kid);
  if (!key) return [...problems, `key_not_found: no signing key ${String(kid)} in the profile`];
  const digest = `sha-256=:${createHash('sha256').update(request.raw).digest('base64')}:`;
  if (header('content-digest') !== digest) problems.push('digest_mismatch: Content-Digest is not the body’s');
  const target = new URL(request.url);
  const derived: Record<string, string> = {
    '@method': request.method.toUpperCase(),
    '@authority': target.host.toLowerCase(),
    '@path': target.pathname,
    '@query': target.search || '?',
  };
  const base = [
    ...components.map((component) => `"${component}": ${derived[component] ?? header(component).trim()}`),
    `"@signature-params": ${input.slice('sig1='.length)}`,
  ].join('\n');
  const signature = /^sig1=:([A-Za-z0-9+/=]+):$/.exec(header('signature'))?.[1];
  if (!signature) return [...problems, 'Signature is not one sig1 byte sequence'];
  const publicKey = createPublicKey({ key: key as never, format: 'jwk' });
  if (!verify('sha256', Buffer.from(base), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64')))
    problems.push('signature_invalid');
  return problems;
}
