import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { connectionIdOf } from '../../commands/integrations/connection.ts';
import { OAuthStateSigner, STATE_TTL_MS } from '../../http/oauth-state.ts';
import { useStandIn } from '../support/integrations.ts';
import { send, type ApiResponse, type Tenant } from '../support/client.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const STATE_SECRET = 'integrations-e2e-state-secret-0123456789';
const WORKSPACE = 'e2e-workspace';
// Where the provider is told to return the browser; the test then calls that path on the service itself.
const PUBLIC_BASE_URL = 'https://ledger.example.test';
const RETURN_PATH = '/unified/oauth/return';

const standIn = useStandIn();

const ctx = useServiceAndTenant(() => ({
  env: { UNIFIED_API_URL: standIn.url, UNIFIED_WORKSPACE_ID: WORKSPACE, PUBLIC_BASE_URL, INTEGRATION_STATE_SECRET: STATE_SECRET },
}));

const signer = new OAuthStateSigner(STATE_SECRET);

const expectError = (response: ApiResponse, status: number, code: string, path?: string) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body).toEqual({ error: { code, message: expect.any(String), details: expect.any(Array) } });
  if (path) expect(response.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
};

const userIdOf = (who: Tenant) => decodeJwt(who.token).sub;
const callback = (who: Tenant, body: unknown) => who.request('POST', '/api/v1/integrations/callback', body);
const listed = async (who: Tenant): Promise<{ id: string; unified_connection_id: string; status: string; created_at: string }[]> => {
  const response = await who.request('GET', '/api/v1/integrations/connections');
  expect(response.status).toBe(200);
  return response.body.connections;
};
const listedIds = async (who: Tenant) => (await listed(who)).map((c) => c.unified_connection_id);
const authUrl = async (who: Tenant, query = ''): Promise<URL> => {
  const response = await who.request('POST', `/api/v1/integrations/auth-url${query}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(Object.keys(response.body)).toEqual(['auth_url']);
  return new URL(response.body.auth_url);
};
/** A browser following the auth URL: the provider redirects to the platform's consent, which redirects back to us. */
async function followAuthUrl(url: URL): Promise<URL> {
  const atProvider = await fetch(url, { redirect: 'manual' });
  expect(atProvider.status).toBe(302);
  const consent = await fetch(atProvider.headers.get('location') ?? '', { redirect: 'manual' });
  expect(consent.status).toBe(302);
  return new URL(consent.headers.get('location') ?? '');
}
const returnFromProvider = (search: string) => send(ctx.service.baseUrl, 'GET', `${RETURN_PATH}${search}`);

describe('the authorization URL', () => {
  it("points at the provider's auth endpoint for our workspace, returns to us, and carries a signed state naming the caller", async () => {
    const url = await authUrl(ctx.tenant);
    expect(url.origin).toBe(standIn.url);
    expect(url.pathname).toBe(`/unified/integration/auth/${WORKSPACE}/commerce`);
    expect(url.searchParams.get('success_redirect')).toBe(`${PUBLIC_BASE_URL}${RETURN_PATH}`);
    expect(url.searchParams.get('failure_redirect')).toBe(`${PUBLIC_BASE_URL}${RETURN_PATH}`);
    const verified = signer.verify(url.searchParams.get('state') ?? '');
    expect(verified).toEqual({
      ok: true,
      state: {
        tenantId: ctx.tenant.tenantId,
        orgId: ctx.tenant.orgId,
        userId: userIdOf(ctx.tenant),
        category: 'commerce',
        nonce: expect.any(String),
        expiresAt: expect.any(Number),
      },
    });
    if (!verified.ok) return;
    expect(verified.state.expiresAt).toBeGreaterThan(Date.now() + STATE_TTL_MS - 60_000);
    expect(verified.state.expiresAt).toBeLessThanOrEqual(Date.now() + STATE_TTL_MS);
  });

  it('names the platform when asked, and the category in the state', async () => {
    const url = await authUrl(ctx.tenant, '?category=accounting&integration_type=xero');
    expect(url.pathname).toBe(`/unified/integration/auth/${WORKSPACE}/xero`);
    const verified = signer.verify(url.searchParams.get('state') ?? '');
    expect(verified.ok && verified.state.category).toBe('accounting');
    // Never the same state twice.
    expect((await authUrl(ctx.tenant)).searchParams.get('state')).not.toBe(url.searchParams.get('state'));
  });

  it('refuses a bad category, a bad platform name and an unknown query parameter', async () => {
    const post = (query: string) => ctx.tenant.request('POST', `/api/v1/integrations/auth-url${query}`);
    expectError(await post('?category=retail'), 400, 'validation_failed', 'querystring.category');
    expectError(await post('?integration_type=Not%20A%20Platform'), 400, 'validation_failed', 'querystring.integration_type');
    expectError(await post('?colour=red'), 400, 'validation_failed');
  });

  it('needs the bearer token like every endpoint', async () => {
    expectError(await send(ctx.service.baseUrl, 'POST', '/api/v1/integrations/auth-url'), 401, 'unauthorized');
  });
});

describe("the browser's return from the provider", () => {
  it('following the auth URL lands on our return route with the connection id and the state, which saves the connection', async () => {
    const url = await authUrl(ctx.tenant, '?integration_type=shopify');
    const location = await followAuthUrl(url);
    expect(`${location.origin}${location.pathname}`).toBe(`${PUBLIC_BASE_URL}${RETURN_PATH}`);
    const id = location.searchParams.get('id') ?? '';
    expect(standIn.connection(id)).toMatchObject({ integration_type: 'shopify', workspace_id: WORKSPACE });
    expect(location.searchParams.get('state')).toBe(url.searchParams.get('state'));

    const returned = await returnFromProvider(location.search);
    expect(returned.status, JSON.stringify(returned.body)).toBe(200);
    expect(returned.body).toEqual({
      status: 'success',
      connection: {
        id: connectionIdOf(id),
        unified_connection_id: id,
        provider: 'shopify',
        category: 'commerce',
        status: 'ACTIVE',
        status_reason: null,
        default_location_id: null,
        webhook_problem: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    });
    expect(await listed(ctx.tenant)).toContainEqual(returned.body.connection);

    // The browser reloading the page saves nothing new.
    const again = await returnFromProvider(location.search);
    expect(again.status).toBe(200);
    expect(again.body.connection).toEqual(returned.body.connection);
    expect((await listedIds(ctx.tenant)).filter((c) => c === id)).toHaveLength(1);
  });

  it('refuses a provider failure, and a missing, forged or expired state, saving nothing', async () => {
    const url = await authUrl(ctx.tenant, '?integration_type=shopify');
    standIn.failAuth(true);
    let failure: URL;
    try {
      failure = await followAuthUrl(url);
    } finally {
      standIn.failAuth(false);
    }
    expect(failure.searchParams.get('error')).toBe('access_denied');
    expectError(await returnFromProvider(failure.search), 400, 'validation_failed', 'query.error');

    const id = standIn.createConnection('shopify', WORKSPACE);
    const claims = {
      tenantId: ctx.tenant.tenantId,
      orgId: ctx.tenant.orgId,
      userId: String(userIdOf(ctx.tenant)),
      category: 'commerce' as const,
    };
    const forged = new OAuthStateSigner('not-the-service-secret-at-all').sign(claims);
    const expired = signer.sign(claims, Date.now() - STATE_TTL_MS - 1_000);
    expectError(await returnFromProvider(`?id=${id}`), 400, 'validation_failed', 'query.state');
    expectError(await returnFromProvider(`?id=${id}&state=${forged}`), 400, 'validation_failed', 'query.state');
    expectError(await returnFromProvider(`?id=${id}&state=${expired}`), 400, 'validation_failed', 'query.state');
    expectError(await returnFromProvider(`?id=${id}&state=garbage`), 400, 'validation_failed', 'query.state');
    expect(await listedIds(ctx.tenant)).not.toContain(id);
    expectError(await ctx.tenant.request('GET', `/api/v1/integrations/connections/${connectionIdOf(id)}`), 404, 'not_found');
  });
});

describe('the callback', () => {
  it('saves a connection from connection_id alone: ACTIVE, the provider asked for the platform, category commerce', async () => {
    const id = standIn.createConnection('shopify', WORKSPACE);
    const saved = await callback(ctx.tenant, { connection_id: id });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect(saved.body).toMatchObject({ status: 'success', message: expect.any(String) });
    const record = (await listed(ctx.tenant)).find((c) => c.unified_connection_id === id);
    expect(record).toEqual({
      id: connectionIdOf(id),
      unified_connection_id: id,
      provider: 'shopify',
      category: 'commerce',
      status: 'ACTIVE',
      status_reason: null,
      default_location_id: null,
      webhook_problem: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(record?.created_at).toBe(saved.body.connection.updated_at);
    const one = await ctx.tenant.request('GET', `/api/v1/integrations/connections/${connectionIdOf(id)}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(record);
  });

  it('takes the provider and category when given, without asking the provider', async () => {
    const saved = await callback(ctx.tenant, { connection_id: 'conn_given_elsewhere', category: 'accounting', provider: 'QuickBooks' });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect(saved.body.connection).toMatchObject({ provider: 'quickbooks', category: 'accounting', status: 'ACTIVE' });
  });

  it('accepts a state this service issued to the caller', async () => {
    const state = (await authUrl(ctx.tenant)).searchParams.get('state');
    const id = standIn.createConnection('woocommerce', WORKSPACE);
    const saved = await callback(ctx.tenant, { connection_id: id, state });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect(saved.body.connection).toMatchObject({ unified_connection_id: id, provider: 'woocommerce', category: 'commerce' });
  });

  it("refuses a forged, expired or another tenant's state, and saves nothing", async () => {
    const other = await ctx.newTenant();
    const claims = {
      tenantId: ctx.tenant.tenantId,
      orgId: ctx.tenant.orgId,
      userId: String(userIdOf(ctx.tenant)),
      category: 'commerce' as const,
    };
    const [payload] = signer.sign(claims).split('.');
    const states = {
      forged: new OAuthStateSigner('not-the-service-secret-at-all').sign(claims),
      unsigned: `${payload}.${'A'.repeat(43)}`,
      expired: signer.sign(claims, Date.now() - STATE_TTL_MS - 1_000),
      "another tenant's": (await authUrl(other)).searchParams.get('state'),
      "another org's": signer.sign({ ...claims, orgId: other.orgId }),
    };
    const id = standIn.createConnection('shopify', WORKSPACE);
    for (const [what, state] of Object.entries(states)) {
      const refused = await callback(ctx.tenant, { connection_id: id, state });
      expect(refused.status, what).toBe(400);
      expectError(refused, 400, 'validation_failed', 'body.state');
    }
    expect(await listedIds(ctx.tenant)).not.toContain(id);
    expect(await listedIds(other)).not.toContain(id);
    expectError(await ctx.tenant.request('GET', `/api/v1/integrations/connections/${connectionIdOf(id)}`), 404, 'not_found');
  });

  it('refuses a category other than the state says', async () => {
    const state = (await authUrl(ctx.tenant, '?category=accounting')).searchParams.get('state');
    const id = standIn.createConnection('xero', WORKSPACE);
    expectError(await callback(ctx.tenant, { connection_id: id, category: 'commerce', state }), 400, 'validation_failed', 'body.category');
    const saved = await callback(ctx.tenant, { connection_id: id, state });
    expect(saved.status).toBe(201);
    expect(saved.body.connection).toMatchObject({ category: 'accounting', provider: 'xero' });
  });

  it('saving the same connection again answers 201 with the same record, and lists it once', async () => {
    const id = standIn.createConnection('shopify', WORKSPACE);
    const first = await callback(ctx.tenant, { connection_id: id });
    const second = await callback(ctx.tenant, { connection_id: id });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.connection).toEqual(first.body.connection);
    expect((await listedIds(ctx.tenant)).filter((c) => c === id)).toHaveLength(1);
  });

  it("refuses another organization's provider connection with 409, which never appears in their list", async () => {
    const id = standIn.createConnection('shopify', WORKSPACE);
    const ours = await callback(ctx.tenant, { connection_id: id });
    expect(ours.status).toBe(201);
    const otherTenant = await ctx.newTenant();
    const otherOrg = await ctx.newTenant({ tenantId: ctx.tenant.tenantId });
    for (const other of [otherTenant, otherOrg]) {
      expectError(await callback(other, { connection_id: id }), 409, 'conflict', 'body.connection_id');
      expectError(await callback(other, { connection_id: id, provider: 'shopify' }), 409, 'conflict', 'body.connection_id');
      expect(await listedIds(other)).not.toContain(id);
    }
    const still = await ctx.tenant.request('GET', `/api/v1/integrations/connections/${connectionIdOf(id)}`);
    expect(still.body).toEqual(ours.body.connection);
  });

  it('refuses a connection the provider does not know with 400', async () => {
    expectError(await callback(ctx.tenant, { connection_id: 'conn_never_issued' }), 400, 'validation_failed', 'body.connection_id');
    expect(await listedIds(ctx.tenant)).not.toContain('conn_never_issued');
  });

  it('validates the body', async () => {
    const cases: [unknown, string][] = [
      [{}, 'body.connection_id'],
      [{ connection_id: '   ' }, 'body.connection_id'],
      [{ connection_id: 'x'.repeat(256) }, 'body.connection_id'],
      [{ connection_id: 42 }, 'body.connection_id'],
      [{ connection_id: 'conn_1', category: 'retail' }, 'body.category'],
      [{ connection_id: 'conn_1', provider: '' }, 'body.provider'],
      [{ connection_id: 'conn_1', state: '' }, 'body.state'],
      [{ connection_id: 'conn_1', colour: 'red' }, 'body'],
    ];
    for (const [body, path] of cases) expectError(await callback(ctx.tenant, body), 400, 'validation_failed', path);
  });
});

describe('the connection lifecycle', () => {
  it('disconnect: unlisted, DISCONNECTED on GET, idempotent; saving it again reactivates the same record', async () => {
    const id = standIn.createConnection('shopify', WORKSPACE);
    const saved = (await callback(ctx.tenant, { connection_id: id })).body.connection;
    const path = `/api/v1/integrations/connections/${saved.id}`;

    const disconnected = await ctx.tenant.request('DELETE', path);
    expect(disconnected.status, JSON.stringify(disconnected.body)).toBe(200);
    expect(disconnected.body).toMatchObject({ id: saved.id, status: 'DISCONNECTED', created_at: saved.created_at });
    expect(await listedIds(ctx.tenant)).not.toContain(id);
    expect((await ctx.tenant.request('GET', path)).body).toEqual(disconnected.body);

    const again = await ctx.tenant.request('DELETE', path);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(disconnected.body);

    const reactivated = await callback(ctx.tenant, { connection_id: id });
    expect(reactivated.status).toBe(201);
    expect(reactivated.body.connection).toMatchObject({ id: saved.id, status: 'ACTIVE', created_at: saved.created_at });
    expect((await listed(ctx.tenant)).filter((c) => c.unified_connection_id === id)).toEqual([reactivated.body.connection]);
  });

  it("is the owner's alone: another tenant's or org's GET and DELETE are 404, and their lists never show it", async () => {
    const id = standIn.createConnection('shopify', WORKSPACE);
    const saved = (await callback(ctx.tenant, { connection_id: id })).body.connection;
    const path = `/api/v1/integrations/connections/${saved.id}`;
    for (const other of [await ctx.newTenant(), await ctx.newTenant({ tenantId: ctx.tenant.tenantId })]) {
      expectError(await other.request('GET', path), 404, 'not_found');
      expectError(await other.request('DELETE', path), 404, 'not_found');
      expect(await listed(other)).toEqual([]);
    }
    expect((await ctx.tenant.request('GET', path)).body).toEqual(saved);
  });

  it('answers 404 for a connection that does not exist, and 400 for an id that is not a UUID', async () => {
    const unknown = `/api/v1/integrations/connections/${connectionIdOf('conn_nobody_has')}`;
    expectError(await ctx.tenant.request('GET', unknown), 404, 'not_found');
    expectError(await ctx.tenant.request('DELETE', unknown), 404, 'not_found');
    expectError(await ctx.tenant.request('GET', '/api/v1/integrations/connections/not-a-uuid'), 400, 'validation_failed', 'params.id');
  });
});

describe('the OpenAPI document', () => {
  it('describes every integrations endpoint, the browser return as public', async () => {
    const document = await (await fetch(`${ctx.service.baseUrl}/openapi.json`)).json();
    expect(Object.keys(document.paths['/api/v1/integrations/auth-url'])).toEqual(['post']);
    expect(Object.keys(document.paths['/api/v1/integrations/callback'])).toEqual(['post']);
    expect(document.paths['/api/v1/integrations/callback'].post.requestBody.content['application/json'].schema.required).toEqual([
      'connection_id',
    ]);
    expect(Object.keys(document.paths['/api/v1/integrations/connections'])).toContain('get');
    expect(Object.keys(document.paths['/api/v1/integrations/connections/{id}']).sort()).toEqual(['delete', 'get']);
    expect(document.paths[RETURN_PATH].get.security).toEqual([]);
  });
});

describe('with the provider unreachable', () => {
  const down = useServiceAndTenant({
    // Nothing listens on port 9 (discard) here: every call is refused at once.
    env: { UNIFIED_API_URL: 'http://127.0.0.1:9', UNIFIED_TIMEOUT_MS: '2000', INTEGRATION_STATE_SECRET: STATE_SECRET },
  });

  it('answers 503 with Retry-After when the platform must be asked, saving nothing; a named platform needs no call', async () => {
    const refused = await callback(down.tenant, { connection_id: 'conn_while_down' });
    expectError(refused, 503, 'unavailable');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await listedIds(down.tenant)).toEqual([]);
    const saved = await callback(down.tenant, { connection_id: 'conn_while_down', provider: 'shopify' });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  });
});
