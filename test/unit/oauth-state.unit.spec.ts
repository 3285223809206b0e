import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OAuthStateSigner, oauthStateSigner, STATE_TTL_MS, type StateClaims } from '../../http/oauth-state.ts';

const secret = 'state-secret-for-unit-tests';
const signer = new OAuthStateSigner(secret);
const claims: StateClaims = {
  tenantId: '6f1c2b1e-0d7a-4c43-9e0e-2b0d6c1f9a01',
  orgId: '0b9e5d44-3c1a-4f7e-8d2b-5a6c7e8f9a02',
  userId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c03',
  category: 'commerce',
};
const now = 1_700_000_000_000;

const decode = (part: string): Record<string, unknown> => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
const encode = (payload: unknown): string => Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');

describe('OAuth state', () => {
  it('is base64url(payload).base64url(mac), and verifies to its claims, a nonce and an expiry 15 minutes on', () => {
    const state = signer.sign(claims, now);
    expect(state).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    const verified = signer.verify(state, now);
    expect(verified).toEqual({ ok: true, state: { ...claims, nonce: expect.any(String), expiresAt: now + STATE_TTL_MS } });
    expect(decode(state.split('.')[0]!)).toMatchObject(claims);
  });

  it('is never the same twice (a random nonce)', () => {
    const a = signer.sign(claims, now);
    const b = signer.sign(claims, now);
    expect(a).not.toBe(b);
    expect(decode(a.split('.')[0]!).nonce).not.toBe(decode(b.split('.')[0]!).nonce);
  });

  it('refuses a payload changed after signing (another tenant, a later expiry)', () => {
    const [payload, mac] = signer.sign(claims, now).split('.') as [string, string];
    const original = decode(payload);
    for (const changed of [
      { ...original, tenantId: '11111111-1111-4111-8111-111111111111' },
      { ...original, orgId: '22222222-2222-4222-8222-222222222222' },
      { ...original, expiresAt: now + 365 * 24 * 3600 * 1000 },
    ]) {
      expect(signer.verify(`${encode(changed)}.${mac}`, now)).toEqual({ ok: false, problem: 'forged' });
    }
  });

  it('refuses a changed or missing signature', () => {
    const [payload, mac] = signer.sign(claims, now).split('.') as [string, string];
    const flipped = Buffer.from(mac, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    expect(signer.verify(`${payload}.${flipped.toString('base64url')}`, now)).toEqual({ ok: false, problem: 'forged' });
    expect(signer.verify(`${payload}.${mac.slice(0, 20)}`, now)).toEqual({ ok: false, problem: 'forged' });
    expect(signer.verify(`${payload}.`, now)).toEqual({ ok: false, problem: 'malformed' });
    expect(signer.verify(payload, now)).toEqual({ ok: false, problem: 'malformed' });
  });

  it('refuses a state signed with another secret', () => {
    const other = new OAuthStateSigner('another-secret-of-16-bytes-or-more');
    expect(signer.verify(other.sign(claims, now), now)).toEqual({ ok: false, problem: 'forged' });
  });

  it('refuses an expired state, and takes one until its last millisecond', () => {
    const state = signer.sign(claims, now);
    expect(signer.verify(state, now + STATE_TTL_MS).ok).toBe(true);
    expect(signer.verify(state, now + STATE_TTL_MS + 1)).toEqual({ ok: false, problem: 'expired' });
    expect(signer.verify(signer.sign(claims, now, -1), now)).toEqual({ ok: false, problem: 'expired' });
  });

  it('refuses what is not a state at all', () => {
    for (const token of ['', 'abc', 'a.b.c', 'not base64!.abc', `${'a'.repeat(3000)}.b`]) {
      expect(signer.verify(token, now), token.slice(0, 20)).toEqual({ ok: false, problem: 'malformed' });
    }
  });

  it('refuses a payload signed with our secret that is not a state', () => {
    // What only the secret's holder can make: the documented format, signed by hand.
    const signedWithSecret = (payload: unknown) => {
      const part = encode(payload);
      return `${part}.${createHmac('sha256', secret).update(part).digest('base64url')}`;
    };
    expect(signer.verify(signedWithSecret({ ...claims, nonce: 'n'.repeat(22), expiresAt: now + 1 }), now).ok).toBe(true);
    expect(signer.verify(signedWithSecret({ tenantId: claims.tenantId }), now)).toEqual({ ok: false, problem: 'malformed' });
    expect(signer.verify(signedWithSecret({ ...claims, nonce: 'n'.repeat(22), expiresAt: now + 1, admin: true }), now)).toEqual({
      ok: false,
      problem: 'malformed',
    });
  });

  it('without a configured secret, signs with a random one per process and says so', () => {
    const warnings: string[] = [];
    const log = { warn: (message: string) => void warnings.push(message) } as never;
    const first = oauthStateSigner(undefined, log);
    const second = oauthStateSigner(undefined, log);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/INTEGRATION_STATE_SECRET/);
    const state = first.sign(claims, now);
    expect(first.verify(state, now).ok).toBe(true);
    expect(second.verify(state, now)).toEqual({ ok: false, problem: 'forged' });
    expect(oauthStateSigner(secret, log).verify(signer.sign(claims, now), now).ok).toBe(true);
    expect(warnings).toHaveLength(2);
  });

  it('refuses a secret shorter than 16 bytes', () => {
    expect(() => new OAuthStateSigner('short')).toThrow(/16 bytes/);
  });
});
