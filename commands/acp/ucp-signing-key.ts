import { createECDH, createHash, createHmac, createPrivateKey, type KeyObject } from 'node:crypto';

/**
 * A tenant's UCP signing key (UCP 2026-04-08, "Message Signatures"): an ECDSA P-256 key whose public half the
 * business profile publishes in `signing_keys`. Derived, like the ACP credentials (acp-credentials.ts), from the
 * service's WEBHOOK_SECRET_KEY and the tenant's webhook secret version: nothing new is stored, and it rotates with
 * the tenant's other secrets (the previous version's key stays published during the grace period).
 */
export type UcpPublicKey = { kid: string; kty: 'EC'; crv: 'P-256'; x: string; y: string; use: 'sig'; alg: 'ES256' };
export type UcpSigningKey = { publicJwk: UcpPublicKey; privateKey: KeyObject };

/** Where a tenant's profile, and so its public keys, is served (http/routes/ucp-profile.ts), under the public base URL. */
export const ucpProfilePath = (tenantId: string, orgId: string) => `/api/v1/ucp/merchants/${tenantId}/${orgId}/.well-known/ucp`;

const b64url = (bytes: Buffer): string => bytes.toString('base64url');

/** RFC 7638 thumbprint of an EC public key: SHA-256 of its required members in lexicographic order. */
export const jwkThumbprint = ({ crv, kty, x, y }: Pick<UcpPublicKey, 'crv' | 'kty' | 'x' | 'y'>): string =>
  b64url(createHash('sha256').update(JSON.stringify({ crv, kty, x, y })).digest());

export function ucpSigningKeyOf(key: string, tenantId: string, orgId: string, version: number): UcpSigningKey {
  // A scalar outside [1, n − 1] (probability ~2^-32) is skipped by hashing again with a counter.
  for (let counter = 0; ; counter++) {
    const d = createHmac('sha256', key).update(`ucp-signing-key:${tenantId}/${orgId}/${version}/${counter}`).digest();
    const ecdh = createECDH('prime256v1');
    try {
      ecdh.setPrivateKey(d);
    } catch {
      continue;
    }
    const point = ecdh.getPublicKey();
    const [x, y] = [b64url(point.subarray(1, 33)), b64url(point.subarray(33, 65))];
    const publicJwk: UcpPublicKey = { kid: '', kty: 'EC', crv: 'P-256', x, y, use: 'sig', alg: 'ES256' };
    publicJwk.kid = jwkThumbprint(publicJwk);
    const privateKey = createPrivateKey({ key: { kty: 'EC', crv: 'P-256', x, y, d: b64url(d) }, format: 'jwk' });
    return { publicJwk, privateKey };
  }
}
