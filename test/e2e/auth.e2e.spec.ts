import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devToken } from '../../bin/token.ts';
import { send } from '../support/client.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';
import { TEST_DEV_SECRET } from '../support/service.ts';

const products = '/api/v1/pim/products';

const expectError = (response: { status: number; body: any }, status: number, code: string) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error).toMatchObject({ code, message: expect.any(String) });
};

describe('development mode tokens', () => {
  const ctx = useServiceAndTenant();

  it('accepts a token linked to the tenant and org it names', async () => {
    const tenant = await ctx.newTenant();
    expect((await tenant.request('GET', products)).status).toBe(200);
  });

  it('answers 401 without a valid bearer token', async () => {
    const tenant = await ctx.newTenant();
    const ids = { 'x-tenant-id': tenant.tenantId, 'x-org-id': tenant.orgId };
    const expired = await devToken({ secret: TEST_DEV_SECRET, tenantId: tenant.tenantId, orgId: tenant.orgId, expiresIn: '-1m' });
    const forged = await devToken({ secret: 'some-other-secret-of-enough-length', tenantId: tenant.tenantId, orgId: tenant.orgId });
    const noClaims = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(TEST_DEV_SECRET));
    const noExpiry = await new SignJWT({ tenant_id: tenant.tenantId, org_id: tenant.orgId })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(randomUUID())
      .sign(new TextEncoder().encode(TEST_DEV_SECRET));
    for (const authorization of [
      undefined,
      'Basic dXNlcjpwYXNz',
      'Bearer',
      'Bearer not.a.jwt',
      `Bearer ${expired}`,
      `Bearer ${forged}`,
      `Bearer ${noClaims}`,
      `Bearer ${noExpiry}`,
    ]) {
      const headers = authorization ? { ...ids, authorization } : ids;
      expectError(await send(ctx.service.baseUrl, 'GET', products, { headers }), 401, 'unauthorized');
      expectError(await send(ctx.service.baseUrl, 'POST', products, { headers, body: { title: 'x' } }), 401, 'unauthorized');
    }
    expect((await tenant.request('GET', products)).body).toEqual([]);
  });

  it('answers 400 for missing or malformed tenant and org headers', async () => {
    const tenant = await ctx.newTenant();
    const authorization = `Bearer ${tenant.token}`;
    const variants: Record<string, string>[] = [
      { authorization },
      { authorization, 'x-tenant-id': tenant.tenantId },
      { authorization, 'x-org-id': tenant.orgId },
      { authorization, 'x-tenant-id': 'tenant-1', 'x-org-id': tenant.orgId },
      { authorization, 'x-tenant-id': tenant.tenantId, 'x-org-id': '' },
    ];
    for (const headers of variants) {
      expectError(await send(ctx.service.baseUrl, 'GET', products, { headers }), 400, 'validation_failed');
    }
  });

  it('answers 403 when the token is linked to another tenant or org', async () => {
    const tenant = await ctx.newTenant();
    const authorization = `Bearer ${tenant.token}`;
    for (const headers of [
      { authorization, 'x-tenant-id': randomUUID(), 'x-org-id': tenant.orgId },
      { authorization, 'x-tenant-id': tenant.tenantId, 'x-org-id': randomUUID() },
    ]) {
      expectError(await send(ctx.service.baseUrl, 'GET', products, { headers }), 403, 'forbidden');
      expectError(await send(ctx.service.baseUrl, 'POST', products, { headers, body: { title: 'x' } }), 403, 'forbidden');
    }
    expect((await tenant.request('GET', products)).body).toEqual([]);
  });
});

describe('JWKS tokens', () => {
  const issuer = 'https://idp.test.local/';
  const audience = 'commerce-ledger';
  let jwksServer: Server;
  let jwksUrl: string;
  let signingKey: CryptoKey;
  let strangerKey: CryptoKey;
  const kid = 'key-1';

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    signingKey = pair.privateKey;
    strangerKey = (await generateKeyPair('RS256')).privateKey;
    const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid, alg: 'RS256', use: 'sig' };
    // A stand-in for the identity provider: it serves its keys over real HTTP, as an IdP does.
    jwksServer = createServer((request, response) => {
      if (request.url === '/.well-known/jwks.json') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
      } else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    const { port } = jwksServer.address() as AddressInfo;
    jwksUrl = `http://127.0.0.1:${port}/.well-known/jwks.json`;
  });
  afterAll(() => jwksServer?.close());
  const ctx = useServiceAndTenant(() => ({
    env: {
      AUTH_JWKS_URL: jwksUrl,
      AUTH_ISSUER: issuer,
      AUTH_AUDIENCE: audience,
      AUTH_DEV_SECRET: '',
      FILE_URL_SECRET: 'a-file-url-secret-of-32-characters-or-more',
    },
  }));

  const token = (
    claims: { tenantId: string; orgId: string },
    options: { key?: CryptoKey; iss?: string; aud?: string; keyId?: string } = {},
  ) =>
    new SignJWT({ tenant_id: claims.tenantId, org_id: claims.orgId, email: 'jwks@example.com' })
      .setProtectedHeader({ alg: 'RS256', kid: options.keyId ?? kid })
      .setSubject(randomUUID())
      .setIssuer(options.iss ?? issuer)
      .setAudience(options.aud ?? audience)
      .setExpirationTime('5m')
      .sign(options.key ?? signingKey);

  it('accepts a token signed by a key of the JWKS with the right issuer and audience', async () => {
    const ids = { tenantId: randomUUID(), orgId: randomUUID() };
    const headers = { authorization: `Bearer ${await token(ids)}`, 'x-tenant-id': ids.tenantId, 'x-org-id': ids.orgId };
    const created = await send(ctx.service.baseUrl, 'POST', products, { headers, body: { title: 'Signed by the IdP' } });
    expect(created.status).toBe(201);
    const audit = await send(ctx.service.baseUrl, 'GET', '/api/v1/pim/audit', { headers });
    expect(audit.body[0]).toMatchObject({ action: 'product.created', actor_email: 'jwks@example.com' });
  });

  it('refuses a wrong issuer, audience or key, and development tokens', async () => {
    const ids = { tenantId: randomUUID(), orgId: randomUUID() };
    const bad = [
      await token(ids, { iss: 'https://evil.example/' }),
      await token(ids, { aud: 'someone-else' }),
      await token(ids, { key: strangerKey }),
      await token(ids, { key: strangerKey, keyId: 'unknown' }),
      await devToken({ secret: TEST_DEV_SECRET, tenantId: ids.tenantId, orgId: ids.orgId, issuer, audience }),
    ];
    for (const jwt of bad) {
      const headers = { authorization: `Bearer ${jwt}`, 'x-tenant-id': ids.tenantId, 'x-org-id': ids.orgId };
      expectError(await send(ctx.service.baseUrl, 'GET', products, { headers }), 401, 'unauthorized');
    }
  });
});
