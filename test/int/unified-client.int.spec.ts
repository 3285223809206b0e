import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError, REFERENCE_SLUG, type CommerceItem } from '../../adapters/provider/provider.ts';
import { parseRetryAfter, UnifiedClient } from '../../adapters/provider/unified-client.ts';
import { startUnifiedStandIn, type UnifiedStandIn } from '../../stack/unified/stand-in.ts';
import { unifiedContract } from '../support/unified-contract.ts';

/**
 * Our client against the provider's stand-in, both real, over HTTP: the calls the push worker makes, and every failure
 * the provider can answer (or fail to answer) arriving as the ProviderError kind the worker decides on.
 */
// Generous for a loaded machine (the suite runs files side by side); the timeout test slows the stand-in past it.
const TIMEOUT_MS = 3_000;

let standIn: UnifiedStandIn;
let client: UnifiedClient;
// Every request our client sends and every answer of the stand-in, held to the provider's SDK.
const contract = unifiedContract();

beforeAll(async () => {
  standIn = await startUnifiedStandIn({ contract: contract.check });
  client = new UnifiedClient({ baseUrl: standIn.url, token: standIn.token, timeoutMs: TIMEOUT_MS });
});

afterAll(async () => {
  console.log(`[unified contract] ${contract.checked()} exchanges checked against @unified-api/typescript-sdk`);
  expect(contract.violations()).toEqual([]);
  await client?.close();
  await standIn?.close();
});

afterEach(() => standIn.clearFaults());

const product = (reference: string, name = `Product ${reference}`): CommerceItem => ({
  name,
  description: 'A test product',
  is_active: true,
  vendor_name: 'Acme',
  tags: ['test'],
  metadata: [{ slug: REFERENCE_SLUG, value: reference }],
  media: [{ url: 'https://cdn.example/a.jpg', position: 0 }],
  prices: [{ price: 12.5, currency: 'EUR' }],
});

/** The ProviderError a call rejects with (fails the test when it resolves or rejects with anything else). */
async function failure(call: Promise<unknown>): Promise<ProviderError> {
  const outcome = await call.then(
    (value) => ({ resolved: value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a ProviderError, the call resolved with ${JSON.stringify(outcome.resolved)}`);
  expect(outcome.error).toBeInstanceOf(ProviderError);
  return outcome.error as ProviderError;
}

describe('authorization', () => {
  it('builds the auth URL, and following it redirects to success_redirect with the new connection id and the state', async () => {
    const authUrl = client.authUrl({
      workspaceId: 'dev-workspace',
      integrationType: 'shopify',
      successRedirect: 'https://app.example/integrations/callback?tenant=t 1',
      failureRedirect: 'https://app.example/integrations/failed',
      state: 'st/ate+1',
      scopes: ['commerce_item_read', 'commerce_item_write'],
      env: 'Sandbox',
    });
    const url = new URL(authUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${standIn.url}/unified/integration/auth/dev-workspace/shopify`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      redirect: 'true',
      success_redirect: 'https://app.example/integrations/callback?tenant=t 1',
      failure_redirect: 'https://app.example/integrations/failed',
      state: 'st/ate+1',
      scopes: 'commerce_item_write',
      env: 'Sandbox',
    });
    // Repeated, as the SDK sends an array query parameter.
    expect(url.searchParams.getAll('scopes')).toEqual(['commerce_item_read', 'commerce_item_write']);

    // The provider redirects the browser to the platform's consent, which returns it to success_redirect.
    const response = await fetch(authUrl, { redirect: 'manual' });
    expect(response.status).toBe(302);
    const consent = await fetch(response.headers.get('location')!, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const location = new URL(consent.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('https://app.example/integrations/callback');
    expect(location.searchParams.get('tenant')).toBe('t 1');
    expect(location.searchParams.get('state')).toBe('st/ate+1');
    const connectionId = location.searchParams.get('id')!;
    expect(connectionId).toMatch(/^conn_/);

    expect(await client.getConnection(connectionId)).toMatchObject({
      id: connectionId,
      integration_type: 'shopify',
      categories: ['commerce', 'accounting'],
    });
    expect(await client.getConnection('conn_unknown')).toBeUndefined();
  });

  it('leaves scopes and env out when not given', () => {
    const url = new URL(
      client.authUrl({
        workspaceId: 'w',
        integrationType: 'woocommerce',
        successRedirect: 'https://a/ok',
        failureRedirect: 'https://a/ko',
        state: 's',
      }),
    );
    expect([...url.searchParams.keys()].sort()).toEqual(['failure_redirect', 'redirect', 'state', 'success_redirect']);
  });

  it('redirects to failure_redirect with error=access_denied and the state when the tenant refuses', async () => {
    standIn.failAuth(true);
    try {
      const authUrl = client.authUrl({
        workspaceId: 'w',
        integrationType: 'shopify',
        successRedirect: 'https://a/ok',
        failureRedirect: 'https://a/ko',
        state: 'xyz',
      });
      const response = await fetch(authUrl, { redirect: 'manual' });
      expect(response.status).toBe(302);
      const consent = await fetch(response.headers.get('location')!, { redirect: 'manual' });
      const location = new URL(consent.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe('https://a/ko');
      expect(location.searchParams.get('error')).toBe('access_denied');
      expect(location.searchParams.get('state')).toBe('xyz');
      expect(location.searchParams.has('id')).toBe(false);
    } finally {
      standIn.failAuth(false);
    }
  });

  it('answers the consent URL as text without redirect=true, as Unified does; success_redirect is optional', async () => {
    const response = await fetch(`${standIn.url}/unified/integration/auth/w/shopify?state=s`, { redirect: 'manual' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const consentUrl = await response.text();
    const consent = await fetch(consentUrl, { redirect: 'manual' });
    expect(consent.status).toBe(200);
    expect(await consent.text()).toMatch(/^Connected: conn_/);
  });
});

describe('commerce items', () => {
  it('create, get, update, find by reference and delete round-trip', async () => {
    const connectionId = standIn.createConnection();
    // Found by substring at the provider, but not ours: the reference must match exactly.
    await client.createItem(connectionId, product('prod-10'));
    const created = await client.createItem(connectionId, product('prod-1'));
    expect(created.id).toEqual(expect.any(String));
    expect(created).toMatchObject(product('prod-1'));

    expect(await client.getItem(connectionId, created.id)).toMatchObject({ id: created.id, ...product('prod-1') });

    const updated = await client.updateItem(connectionId, created.id, { ...product('prod-1', 'Renamed'), is_active: false });
    expect(updated).toMatchObject({ id: created.id, name: 'Renamed', is_active: false });
    expect(standIn.items(connectionId).find((item) => item.id === created.id)).toMatchObject({ name: 'Renamed', is_active: false });

    expect(await client.findItemByReference(connectionId, 'prod-1')).toMatchObject({ id: created.id, name: 'Renamed' });
    expect(await client.findItemByReference(connectionId, 'prod-')).toBeUndefined();

    await client.deleteItem(connectionId, created.id);
    expect(await client.getItem(connectionId, created.id)).toBeUndefined();
    await expect(client.deleteItem(connectionId, created.id)).resolves.toBeUndefined();
    expect(await client.findItemByReference(connectionId, 'prod-1')).toBeUndefined();
    expect(standIn.items(connectionId).map((item) => item.metadata?.[0]?.value)).toEqual(['prod-10']);

    expect(standIn.requests(connectionId).map(({ method, path, status }) => `${method} ${path} ${status}`)).toEqual([
      `POST /commerce/${connectionId}/item 200`,
      `POST /commerce/${connectionId}/item 200`,
      `GET /commerce/${connectionId}/item/${created.id} 200`,
      `PUT /commerce/${connectionId}/item/${created.id} 200`,
      `GET /commerce/${connectionId}/item 200`,
      `GET /commerce/${connectionId}/item 200`,
      `DELETE /commerce/${connectionId}/item/${created.id} 200`,
      `GET /commerce/${connectionId}/item/${created.id} 404`,
      `DELETE /commerce/${connectionId}/item/${created.id} 404`,
      `GET /commerce/${connectionId}/item 200`,
    ]);
  });

  it('finds a reference beyond the first page of substring matches', async () => {
    const connectionId = standIn.createConnection();
    await Promise.all(Array.from({ length: 150 }, (_, i) => client.createItem(connectionId, product(`ref-${i + 100}`))));
    const wanted = await client.createItem(connectionId, product('ref-1'));
    expect(await client.findItemByReference(connectionId, 'ref-1')).toMatchObject({ id: wanted.id });
  });

  it('takes high concurrency on its pool', async () => {
    const connectionId = standIn.createConnection();
    // What is held here is that 300 calls at once all get through the pool, not how fast: on a loaded machine the 300th
    // answer may come later than the other tests' TIMEOUT_MS.
    const patient = new UnifiedClient({ baseUrl: standIn.url, token: standIn.token, timeoutMs: 60_000 });
    try {
      const created = await Promise.all(Array.from({ length: 300 }, (_, i) => patient.createItem(connectionId, product(`c-${i}`))));
      expect(new Set(created.map((item) => item.id)).size).toBe(300);
      expect(standIn.items(connectionId)).toHaveLength(300);
    } finally {
      await patient.close();
    }
  });

  it('reads a large error page to the end, so its one pooled socket serves the next call, and quotes only an excerpt', async () => {
    // A proxy in front of the provider answering a big HTML page: left unread, it would hold the only socket.
    const page = `<html><body>${'Bad gateway. '.repeat(80_000)}</body></html>`;
    let calls = 0;
    const proxy = createServer((_req, res) => {
      calls++;
      if (calls <= 3) res.writeHead(502, { 'content-type': 'text/html' }).end(page);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'item_1', name: 'ok', is_active: true }));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const single = new UnifiedClient({
      baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      token: 't',
      timeoutMs: TIMEOUT_MS,
      connections: 1,
    });
    try {
      for (let i = 0; i < 3; i++) {
        const error = await failure(single.getItem('conn', 'item_1'));
        expect(error).toMatchObject({ kind: 'server', status: 502 });
        expect(error.message).toContain('Bad gateway.');
        expect(error.message.length).toBeLessThan(400);
      }
      expect(await single.getItem('conn', 'item_1')).toMatchObject({ id: 'item_1' });
    } finally {
      await single.close();
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('rejects an item the provider refuses (400) as rejected, not retryable, with its reason', async () => {
    const connectionId = standIn.createConnection();
    const error = await failure(client.createItem(connectionId, { ...product('p'), name: '' }));
    expect(error).toMatchObject({ kind: 'rejected', status: 400, retryable: false });
    expect(error.message).toContain(`POST /commerce/${connectionId}/item`);
    expect(error.message).toContain('400');
    expect(error.message).toContain('name must not be empty');
  });
});

describe('failures map to ProviderError kinds', () => {
  it('5xx is a retryable server failure, with method, path, status and the provider’s message', async () => {
    const connectionId = standIn.createConnection();
    standIn.failNext(connectionId, 1);
    const error = await failure(client.createItem(connectionId, product('p')));
    expect(error).toMatchObject({ kind: 'server', status: 500, retryable: true });
    expect(error.message).toMatch(new RegExp(`^POST /commerce/${connectionId}/item .*500.*The integration failed`));
    expect(standIn.items(connectionId)).toEqual([]);
    expect(await client.createItem(connectionId, product('p'))).toMatchObject({ name: 'Product p' });
  });

  it('429 is rate_limited, with retryAfterMs from Retry-After or undefined without it', async () => {
    const connectionId = standIn.createConnection();
    standIn.rateLimitNext(connectionId, 1, 2);
    standIn.rateLimitNext(connectionId, 1);
    const withHeader = await failure(client.createItem(connectionId, product('p')));
    expect(withHeader).toMatchObject({ kind: 'rate_limited', status: 429, retryAfterMs: 2000, retryable: true });
    const without = await failure(client.createItem(connectionId, product('p')));
    expect(without).toMatchObject({ kind: 'rate_limited', status: 429, retryable: true });
    expect(without.retryAfterMs).toBeUndefined();
  });

  it('reads Retry-After as delta-seconds or an HTTP-date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('queued faults come one after another, then the calls succeed again', async () => {
    const connectionId = standIn.createConnection();
    standIn.failNext(connectionId, 1, 502);
    standIn.rateLimitNext(connectionId, 1, 1);
    expect(await failure(client.createItem(connectionId, product('p')))).toMatchObject({ kind: 'server', status: 502 });
    expect(await failure(client.createItem(connectionId, product('p')))).toMatchObject({ kind: 'rate_limited', retryAfterMs: 1000 });
    expect(await client.createItem(connectionId, product('p'))).toMatchObject({ name: 'Product p' });
  });

  it.each([401, 403] as const)('a connection revoked with %i is auth and not retryable, until restored', async (status) => {
    const connectionId = standIn.createConnection();
    const item = await client.createItem(connectionId, product('p'));
    standIn.revoke(connectionId, status);
    // One call at a time: a second promise made up front could reject before anything listens to it.
    for (const call of [() => client.updateItem(connectionId, item.id, product('p')), () => client.getItem(connectionId, item.id)]) {
      expect(await failure(call())).toMatchObject({ kind: 'auth', status, retryable: false });
    }
    standIn.restore(connectionId);
    expect(await client.getItem(connectionId, item.id)).toMatchObject({ id: item.id });
  });

  it('404 is not_found: a revoked-as-gone connection, an unknown connection, an item that is not there', async () => {
    const connectionId = standIn.createConnection();
    const item = await client.createItem(connectionId, product('p'));
    standIn.revoke(connectionId, 404);
    expect(await failure(client.updateItem(connectionId, item.id, product('p')))).toMatchObject({
      kind: 'not_found',
      status: 404,
      retryable: false,
    });
    standIn.restore(connectionId);
    expect(await failure(client.createItem('conn_unknown', product('p')))).toMatchObject({ kind: 'not_found', status: 404 });
    expect(await failure(client.updateItem(connectionId, 'item_missing', product('p')))).toMatchObject({ kind: 'not_found', status: 404 });
  });

  it('an answer slower than the client’s timeout is a retryable timeout', async () => {
    const connectionId = standIn.createConnection();
    standIn.slow(connectionId, TIMEOUT_MS + 700);
    const started = Date.now();
    const error = await failure(client.createItem(connectionId, product('p')));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 500);
    standIn.slow(connectionId, 0);
    expect(await client.createItem(connectionId, product('q'))).toMatchObject({ name: 'Product q' });
  });

  it('a create answered by a dropped socket is network or timeout, yet the item exists and is found by its reference', async () => {
    const connectionId = standIn.createConnection();
    standIn.loseNextCreateResponse(connectionId);
    const error = await failure(client.createItem(connectionId, product('lost-1')));
    expect(['network', 'timeout']).toContain(error.kind);
    expect(error.retryable).toBe(true);
    expect(standIn.items(connectionId)).toHaveLength(1);
    expect(standIn.requests(connectionId).at(-1)).toMatchObject({ method: 'POST', status: 0 });
    const found = await client.findItemByReference(connectionId, 'lost-1');
    expect(found).toMatchObject({ id: standIn.items(connectionId)[0]!.id, name: 'Product lost-1' });
    // Only the next create was lost.
    expect(await client.createItem(connectionId, product('lost-2'))).toMatchObject({ name: 'Product lost-2' });
  });

  it('a wrong bearer token is auth, and the stand-in says why in its error body', async () => {
    const connectionId = standIn.createConnection();
    const wrong = new UnifiedClient({ baseUrl: standIn.url, token: 'not-the-token', timeoutMs: TIMEOUT_MS });
    try {
      const error = await failure(wrong.createItem(connectionId, product('p')));
      expect(error).toMatchObject({ kind: 'auth', status: 401, retryable: false });
      expect(error.message).toContain('The API token is not valid');
      await expect(failure(wrong.getConnection(connectionId))).resolves.toMatchObject({ kind: 'auth' });
    } finally {
      await wrong.close();
    }
    const raw = await fetch(`${standIn.url}/commerce/${connectionId}/item`);
    expect(raw.status).toBe(401);
    expect(raw.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await raw.json()).toEqual({ status: 401, message: expect.any(String) });
  });

  it('nobody listening is a retryable network failure', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const nowhere = new UnifiedClient({ baseUrl: `http://127.0.0.1:${port}`, token: 't', timeoutMs: TIMEOUT_MS });
    try {
      const error = await failure(nowhere.getItem('conn', 'item'));
      expect(error).toMatchObject({ kind: 'network', retryable: true });
      expect(error.message).toContain('ECONNREFUSED');
    } finally {
      await nowhere.close();
    }
  });
});

describe('webhooks', () => {
  it('subscribes and lists the connection’s subscriptions', async () => {
    const connectionId = standIn.createConnection();
    const other = standIn.createConnection();
    const subscription = {
      connection_id: connectionId,
      hook_url: 'https://svc.example/hooks/unified',
      object_type: 'accounting_order',
      event: 'created',
    };
    const created = await client.createWebhook(subscription);
    // The provider's whole Webhook object.
    expect(created).toMatchObject({ id: expect.any(String), ...subscription, workspace_id: 'dev-workspace', is_healthy: true });
    await client.createWebhook({ ...subscription, connection_id: other });

    expect(await client.listWebhooks(connectionId)).toEqual([created]);
    expect(standIn.subscriptions(connectionId)).toEqual([created]);
    expect(standIn.subscriptions()).toHaveLength(2);

    // An object type the provider does not have (its SDK's WebhookObjectType) is refused.
    expect(await failure(client.createWebhook({ ...subscription, object_type: 'commerce_order' }))).toMatchObject({
      kind: 'rejected',
      status: 400,
    });
    expect(contract.take()).toEqual([expect.stringContaining('object_type "commerce_order" is not a WebhookObjectType')]);
    expect(await failure(client.createWebhook({ ...subscription, connection_id: 'conn_unknown' }))).toMatchObject({ kind: 'not_found' });
    standIn.failNext(connectionId, 1, 503);
    expect(await failure(client.listWebhooks(connectionId))).toMatchObject({ kind: 'server', status: 503 });

    const removed = await fetch(`${standIn.url}/unified/webhook/${created.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${standIn.token}` },
    });
    expect(removed.status).toBe(200);
    expect(await client.listWebhooks(connectionId)).toEqual([]);
  });
});

describe('item variants', () => {
  it('creates variants of an item, lists them by item, updates, deletes; deleting the item takes its variants', async () => {
    const connectionId = standIn.createConnection();
    const item = await client.createItem(connectionId, product('v-1'));
    const other = await client.createItem(connectionId, product('v-2'));
    const variant = (sku: string, itemId = item.id) => ({
      name: sku,
      sku,
      is_active: true,
      metadata: [{ slug: REFERENCE_SLUG, value: `v-1/${sku}` }],
      prices: [{ price: 9.5, currency: 'EUR' }],
      items: [{ id: itemId }],
    });
    const red = await client.createItemVariant(connectionId, variant('RED'));
    const blue = await client.createItemVariant(connectionId, variant('BLUE'));
    await client.createItemVariant(connectionId, variant('OTHER', other.id));
    expect(red).toMatchObject({ id: expect.any(String), ...variant('RED') });
    expect((await client.listItemVariants(connectionId, item.id)).map((v) => v.sku).sort()).toEqual(['BLUE', 'RED']);

    expect(
      await client.updateItemVariant(connectionId, red.id, { ...variant('RED'), prices: [{ price: 11, currency: 'EUR' }] }),
    ).toMatchObject({
      id: red.id,
      prices: [{ price: 11, currency: 'EUR' }],
    });
    await client.deleteItemVariant(connectionId, blue.id);
    await expect(client.deleteItemVariant(connectionId, blue.id)).resolves.toBeUndefined();
    expect((await client.listItemVariants(connectionId, item.id)).map((v) => v.id)).toEqual([red.id]);

    // A variant names an existing item of the connection.
    expect(await failure(client.createItemVariant(connectionId, variant('X', 'item_missing')))).toMatchObject({ kind: 'not_found' });
    await client.deleteItem(connectionId, item.id);
    expect(standIn.variants(connectionId).map((v) => v.sku)).toEqual(['OTHER']);
  });

  it("drops what the provider's item model has no field for, as the real API does", async () => {
    const connectionId = standIn.createConnection();
    const response = await fetch(`${standIn.url}/commerce/${connectionId}/item`, {
      method: 'POST',
      headers: { authorization: `Bearer ${standIn.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'With variants', variants: [{ sku: 'A' }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).not.toHaveProperty('variants');
    expect(contract.take()).toEqual([expect.stringContaining("is not the SDK's model")]);
  });
});
