import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { acpCredentialsOf } from '../../commands/acp/acp-credentials.ts';
import { checkoutSessionIdOf } from '../../commands/acp/checkout-session.ts';
import { ucpSigningKeyOf } from '../../commands/acp/ucp-signing-key.ts';
import { DEVELOPMENT_WEBHOOK_SECRET_KEY } from '../../commands/integrations/webhook-secret.ts';
import { ConflictError } from '../../ledger/errors.ts';
import { checkoutRouteCatalog } from '../support/checkout-route-catalog.ts';
import type { FakeLedger } from '../support/fake-ledger.ts';
import { routeApp } from '../support/route-app.ts';
import { ucpResponseSignatureProblems } from '../support/ucp-signatures.ts';
import {
  ucpDeclaresStatus,
  ucpProtocolErrorProblems,
  ucpRequestProblems,
  ucpResponseProblems,
  type UcpOperation,
} from '../support/ucp-checkout-schema.ts';

const at = new Date('2026-11-26T10:00:00.000Z');
const catalog = checkoutRouteCatalog(at);
const { tenantId, orgId, otherTenant, variantId, opened } = catalog;
const apiKey = acpCredentialsOf(DEVELOPMENT_WEBHOOK_SECRET_KEY, tenantId, orgId, 0).apiKey;
const base = `/api/v1/ucp/shopping/${tenantId}/${orgId}`;

let app: FastifyInstance;
let ledger: FakeLedger;

beforeAll(async () => {
  ({ app, ledger } = await routeApp(catalog.ledger()));
});
afterAll(() => app.close());
beforeEach(() => ledger.reset(opened, 'checkout_sessions'));

type Options = { headers?: Record<string, string>; omit?: string[]; idempotencyKey?: string };

/** A platform's request as UCP's REST binding has it: API key, UCP-Agent, Request-Id, an Idempotency-Key on writes. */
const platform = (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, options: Options = {}) => {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const all: Record<string, string> = {
    'x-api-key': apiKey,
    'ucp-agent': 'profile="https://platform.example/.well-known/ucp"',
    'request-id': randomUUID(),
    ...(payload ? { 'content-type': 'application/json' } : {}),
    ...(method === 'GET' ? {} : { 'idempotency-key': options.idempotencyKey ?? '6f1c0b8e-2a3d-4c5b-9e7f-0a1b2c3d4e5f' }),
    ...options.headers,
  };
  for (const name of options.omit ?? []) delete all[name];
  return app.inject({ method, url: `${base}${path}`, headers: all, ...(payload ? { payload } : {}) });
};

/** The answer judged by UCP's OpenAPI (a 2xx it declares) and schemas, or as a protocol error `{code, content}`. */
const judged = (response: { statusCode: number; json: () => any }, method: string, openapiPath: string) => {
  const body = response.json();
  if (response.statusCode < 300) {
    expect(ucpDeclaresStatus(method, openapiPath, response.statusCode), `${method} ${openapiPath} ${response.statusCode}`).toBe(true);
    expect(ucpResponseProblems(body)).toEqual([]);
  } else expect(ucpProtocolErrorProblems(body)).toEqual([]);
  return body;
};

const createBody = { line_items: [{ item: { id: variantId }, quantity: 2 }] };
const request = (operation: UcpOperation, body: unknown) => {
  expect(ucpRequestProblems(operation, body)).toEqual([]);
  return body;
};

describe('UCP checkout routes', () => {
  it('opens a session for the items, in the currency of their price, under the id its Idempotency-Key derives', async () => {
    const response = await platform('POST', '/checkout-sessions', request('create', createBody));
    expect(response.statusCode).toBe(201);
    const session = judged(response, 'post', '/checkout-sessions');
    const sessionId = checkoutSessionIdOf(tenantId, orgId, 'ucp:6f1c0b8e-2a3d-4c5b-9e7f-0a1b2c3d4e5f');
    expect(ledger.sent).toEqual([expect.objectContaining({ aggregate: 'checkout-session', type: 'OpenCheckoutSession', tenantId, orgId })]);
    expect(ledger.sent[0]?.data).toMatchObject({
      sessionId,
      currency: 'EUR',
      lines: [{ itemId: variantId, quantity: 2, unitPrice: '12.50' }],
    });
    expect(session).toMatchObject({
      id: sessionId,
      status: 'incomplete',
      currency: 'EUR',
      line_items: [{ item: { id: variantId, title: 'Espresso cup', price: 1250 }, quantity: 2 }],
      totals: [
        { type: 'subtotal', amount: 2500 },
        { type: 'total', amount: 2500 },
      ],
    });
    expect(session.messages.map((message: any) => message.path)).toEqual([
      '$.fulfillment.methods[0].destinations',
      '$.fulfillment.methods[0].groups[0].selected_option_id',
    ]);
  });

  it("signs the answer with the tenant's key (RFC 9421 over status, Content-Digest and Content-Type): it verifies, a changed byte does not", async () => {
    const response = await platform('POST', '/checkout-sessions', createBody);
    expect(response.statusCode).toBe(201);
    const answer = { status: response.statusCode, headers: new Headers(response.headers as Record<string, string>), raw: response.body };
    const published = [ucpSigningKeyOf(DEVELOPMENT_WEBHOOK_SECRET_KEY, tenantId, orgId, 0).publicJwk];
    expect(answer.headers.get('signature-input')).toMatch(
      /^sig1=\("@status" "content-digest" "content-type"\);created=\d+;keyid="[\w-]+"$/,
    );
    expect(ucpResponseSignatureProblems(answer, published)).toEqual([]);
    expect(ucpResponseSignatureProblems({ ...answer, raw: answer.raw.replace('incomplete', 'completed!') }, published)).toContain(
      'digest_mismatch: Content-Digest is not the body’s',
    );
    expect(ucpResponseSignatureProblems({ ...answer, status: 200 }, published)).toEqual(['signature_invalid']);
    const another = [ucpSigningKeyOf(DEVELOPMENT_WEBHOOK_SECRET_KEY, otherTenant, orgId, 0).publicJwk];
    expect(ucpResponseSignatureProblems(answer, another)[0]).toMatch(/^key_not_found/);
  });

  it("answers an item that is not for sale as a business outcome: the create's 201, an error_response naming it, nothing sent", async () => {
    const response = await platform(
      'POST',
      '/checkout-sessions',
      request('create', { line_items: [{ item: { id: randomUUID() }, quantity: 1 }] }),
    );
    expect(response.statusCode).toBe(201);
    expect(judged(response, 'post', '/checkout-sessions')).toMatchObject({
      ucp: { status: 'error' },
      messages: [{ type: 'error', code: 'item_unavailable', severity: 'recoverable', path: '$.line_items[0].item.id' }],
    });
    expect(ledger.sent).toEqual([]);
  });

  it.each([
    ['no X-API-Key', { omit: ['x-api-key'] }, 401, 'unauthorized'],
    [
      "another tenant's API key",
      { headers: { 'x-api-key': acpCredentialsOf(DEVELOPMENT_WEBHOOK_SECRET_KEY, otherTenant, orgId, 0).apiKey } },
      401,
      'unauthorized',
    ],
    ['no UCP-Agent', { omit: ['ucp-agent'] }, 400, 'invalid_profile_url'],
    [
      'a UCP-Agent that is no https profile',
      { headers: { 'ucp-agent': 'profile="http://platform.example/p"' } },
      400,
      'invalid_profile_url',
    ],
    ['no Idempotency-Key', { omit: ['idempotency-key'] }, 400, 'invalid_request'],
    ['an Idempotency-Key that is not a UUID', { idempotencyKey: 'key-1' }, 400, 'invalid_request'],
    ['no Request-Id', { omit: ['request-id'] }, 400, 'invalid_request'],
  ] as const)('refuses a request with %s as a protocol error, sending nothing', async (_what, options, status, code) => {
    const response = await platform('POST', '/checkout-sessions', createBody, options as Options);
    expect(response.statusCode).toBe(status);
    expect(judged(response, 'post', '/checkout-sessions')).toMatchObject({ code });
    expect(ledger.sent).toEqual([]);
  });

  it('refuses a body UCP does not allow (no line_items) with 400', async () => {
    const response = await platform('POST', '/checkout-sessions', { buyer: { email: 'a@example.com' } });
    expect(response.statusCode).toBe(400);
    expect(judged(response, 'post', '/checkout-sessions')).toMatchObject({ code: 'invalid_request' });
  });

  it("answers another tenant's session, and an id that is none of ours, as not_found (200, unrecoverable)", async () => {
    await platform('POST', '/checkout-sessions', createBody);
    const theirs = ledger.tables.checkout_sessions?.[0];
    if (theirs) theirs.tenant_id = otherTenant;
    ledger.sent.length = 0;
    for (const id of [String(theirs?.id), 'chk_not_a_uuid']) {
      const response = await platform('GET', `/checkout-sessions/${id}`);
      expect(response.statusCode).toBe(200);
      expect(judged(response, 'get', '/checkout-sessions/{id}')).toMatchObject({
        ucp: { status: 'error' },
        messages: [{ code: 'not_found', severity: 'unrecoverable' }],
      });
    }
    expect(ledger.sent).toEqual([]);
  });

  it('answers a key reused for another request 409, as UCP says', async () => {
    ledger.decide = () =>
      new ConflictError('the key was used for another request', [{ path: 'headers.idempotency-key', message: 'reused' }]);
    const response = await platform('POST', '/checkout-sessions', createBody);
    expect(response.statusCode).toBe(409);
    expect(judged(response, 'post', '/checkout-sessions')).toMatchObject({ code: 'idempotency_conflict' });
  });

  it('answers 503 as a protocol error with Retry-After while Kafka is down', async () => {
    ledger.down.add('kafka');
    const response = await platform('POST', '/checkout-sessions', createBody);
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('2');
    expect(judged(response, 'post', '/checkout-sessions')).toMatchObject({ code: 'service_unavailable' });
  });
});
