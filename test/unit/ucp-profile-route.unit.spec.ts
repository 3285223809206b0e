import { createPublicKey, randomUUID, sign, verify } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ucpSigningKeyOf } from '../../commands/acp/ucp-signing-key.ts';
import { DEVELOPMENT_WEBHOOK_SECRET_KEY } from '../../commands/integrations/webhook-secret.ts';
import { FakeLedger } from '../support/fake-ledger.ts';
import { newCaller, routeApp } from '../support/route-app.ts';
import { ucpProfileProblems } from '../support/ucp-profile-schema.ts';

const publicBaseUrl = 'https://ledger.example.com';
const [tenantId, orgId, otherTenant, rotatedTenant] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
const profilePath = (tenant: string, org: string) => `/api/v1/ucp/merchants/${tenant}/${org}/.well-known/ucp`;
const inGrace = new Date(Date.now() + 3_600_000);

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await routeApp(
    new FakeLedger({
      webhook_secrets: [
        {
          id: randomUUID(),
          tenant_id: rotatedTenant,
          org_id: orgId,
          version: 2,
          previous_version: 1,
          previous_valid_until: inGrace,
          rotated_at: new Date(),
        },
      ],
    }),
    { PUBLIC_BASE_URL: publicBaseUrl },
  ));
});
afterAll(() => app.close());

const profileOf = async (tenant: string, org = orgId) => {
  const response = await app.inject({ method: 'GET', url: profilePath(tenant, org) });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as { ucp: Record<string, any>; signing_keys: Record<string, string>[] };
};

describe('UCP business profile', () => {
  it("is public, valid per UCP's published schema, and declares the tenant's UCP and ACP checkouts, its delegated payment and its key", async () => {
    const response = await app.inject({ method: 'GET', url: profilePath(tenantId, orgId) });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    const profile = response.json();
    expect(ucpProfileProblems(profile)).toEqual([]);
    expect(profile.ucp).toMatchObject({
      version: '2026-04-08',
      services: {
        'dev.ucp.shopping': [
          {
            version: '2026-04-08',
            transport: 'rest',
            endpoint: `${publicBaseUrl}/api/v1/ucp/shopping/${tenantId}/${orgId}`,
            spec: 'https://ucp.dev/2026-04-08/specification/overview',
            schema: 'https://ucp.dev/2026-04-08/services/shopping/rest.openapi.json',
          },
        ],
        'dev.agenticcommerce': [
          { version: '2026-04-17', transport: 'rest', endpoint: `${publicBaseUrl}/api/v1/ucp/acp/${tenantId}/${orgId}` },
        ],
      },
      capabilities: {
        'dev.ucp.shopping.checkout': [
          {
            version: '2026-04-08',
            spec: 'https://ucp.dev/2026-04-08/specification/checkout',
            schema: 'https://ucp.dev/2026-04-08/schemas/shopping/checkout.json',
          },
        ],
        'dev.ucp.shopping.fulfillment': [{ version: '2026-04-08', extends: 'dev.ucp.shopping.checkout' }],
        'dev.ucp.shopping.order': [
          {
            version: '2026-04-08',
            spec: 'https://ucp.dev/2026-04-08/specification/order',
            schema: 'https://ucp.dev/2026-04-08/schemas/shopping/order.json',
          },
        ],
        'dev.agenticcommerce.checkout': [{ version: '2026-04-17' }],
      },
      payment_handlers: {
        'dev.acp.tokenized.card': [{ id: 'card_tokenized', config: { delegated_payment: true, captures_payment: false } }],
      },
    });
    // Each capability is served by its service: UCP's under dev.ucp.shopping, ACP's under its own namespace. The order
    // capability's events go to the platform's order webhook (consumers/checkout/checkout-notifier.ts).
    expect(Object.keys(profile.ucp.capabilities).sort()).toEqual([
      'dev.agenticcommerce.checkout',
      'dev.ucp.shopping.checkout',
      'dev.ucp.shopping.fulfillment',
      'dev.ucp.shopping.order',
    ]);
    expect(profile.signing_keys).toEqual([ucpSigningKeyOf(DEVELOPMENT_WEBHOOK_SECRET_KEY, tenantId, orgId, 0).publicJwk]);
  });

  it('publishes the public half of the key the tenant signs with: a signature by it verifies, another key’s does not', async () => {
    const [published] = (await profileOf(tenantId)).signing_keys;
    const message = Buffer.from('order_update for the agent platform');
    const verifier = createPublicKey({ key: published as never, format: 'jwk' });
    const own = ucpSigningKeyOf(DEVELOPMENT_WEBHOOK_SECRET_KEY, tenantId, orgId, 0).privateKey;
    const another = ucpSigningKeyOf(DEVELOPMENT_WEBHOOK_SECRET_KEY, otherTenant, orgId, 0).privateKey;
    expect(verify('sha256', message, verifier, sign('sha256', message, own))).toBe(true);
    expect(verify('sha256', message, verifier, sign('sha256', message, another))).toBe(false);
  });

  it("names only its own tenant: another tenant's profile has its own endpoint and key", async () => {
    const [mine, theirs] = [await profileOf(tenantId), await profileOf(otherTenant)];
    expect(ucpProfileProblems(theirs)).toEqual([]);
    expect(theirs.ucp.services['dev.agenticcommerce'][0].endpoint).toBe(`${publicBaseUrl}/api/v1/ucp/acp/${otherTenant}/${orgId}`);
    expect(theirs.ucp.services['dev.ucp.shopping'][0].endpoint).toBe(`${publicBaseUrl}/api/v1/ucp/shopping/${otherTenant}/${orgId}`);
    expect(JSON.stringify(theirs)).not.toContain(tenantId);
    expect(theirs.signing_keys[0]?.kid).not.toBe(mine.signing_keys[0]?.kid);
  });

  it('keeps the previous key published while a rotation’s grace lasts, the current one first', async () => {
    const keys = (await profileOf(rotatedTenant)).signing_keys.map((key) => key.kid);
    const kidOf = (version: number) => ucpSigningKeyOf(DEVELOPMENT_WEBHOOK_SECRET_KEY, rotatedTenant, orgId, version).publicJwk.kid;
    expect(keys).toEqual([kidOf(2), kidOf(1)]);
  });

  it('answers a malformed merchant address with the one error body', async () => {
    const response = await app.inject({ method: 'GET', url: profilePath('not-a-tenant', orgId) });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
  });

  it("is where the tenant's agent checkout settings say", async () => {
    const caller = await newCaller({ tenantId, orgId });
    const settings = await app.inject({ method: 'GET', url: '/api/v1/ucp/agent-checkout', headers: caller.headers });
    expect(settings.statusCode, settings.body).toBe(200);
    const { ucp_profile_url: url, base_url: baseUrl } = settings.json();
    expect(url).toBe(`${publicBaseUrl}${profilePath(tenantId, orgId)}`);
    expect((await profileOf(tenantId)).ucp.services['dev.agenticcommerce'][0].endpoint).toBe(baseUrl.replace(/\/$/, ''));
  });
});

describe('the public profile route’s budget per source address', () => {
  const BUDGET = 2;
  let limited: FastifyInstance;
  beforeAll(async () => {
    ({ app: limited } = await routeApp(new FakeLedger(), {
      PUBLIC_BASE_URL: publicBaseUrl,
      RATE_LIMIT_PUBLIC_ADDRESS: String(BUDGET),
      RATE_LIMIT_WINDOW_SECONDS: '3600',
    }));
  });
  afterAll(() => limited.close());

  it('answers with the RateLimit headers, then 429 with Retry-After and the error body once the address has spent it', async () => {
    for (let i = 0; i < BUDGET; i++) {
      const response = await limited.inject({ method: 'GET', url: profilePath(randomUUID(), orgId) });
      expect(response.statusCode).toBe(200);
      expect(response.headers['ratelimit-remaining']).toBe(String(BUDGET - 1 - i));
    }
    const refused = await limited.inject({ method: 'GET', url: profilePath(randomUUID(), orgId) });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ error: { code: 'rate_limited', message: expect.stringMatching(/address/), details: [] } });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Another address has its own.
    const other = await limited.inject({ method: 'GET', url: profilePath(tenantId, orgId), remoteAddress: '198.51.100.7' });
    expect(other.statusCode).toBe(200);
  });
});
