import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../ledger/errors.ts';
import { FakeLedger, type SentCommand } from '../support/fake-ledger.ts';
import { newCaller, routeApp, type Caller } from '../support/route-app.ts';

const at = new Date('2025-01-02T03:04:05.000Z');

/** The catalog read model's row for a product, as the projection writes it. */
const productRow = (owner: Pick<Caller, 'tenantId' | 'orgId'>, fields: Record<string, unknown> = {}) => ({
  id: randomUUID(),
  tenant_id: owner.tenantId,
  org_id: owner.orgId,
  title: 'Mug',
  description: null,
  category: null,
  sku: null,
  brand: null,
  template_id: null,
  attributes: {},
  status: 'ACTIVE',
  quality_score: 40,
  created_at: at,
  updated_at: at,
  ...fields,
});

/** What the catalog projection makes of an accepted CreateProduct. */
const projectCreate = (command: SentCommand) => {
  const { productId, title, description, category, sku = null, brand = null } = command.data;
  return { rows: { products: [productRow(command, { id: productId, title, description, category, sku, brand })] } };
};

let app: FastifyInstance;
let ledger: FakeLedger;
let caller: Caller;

beforeAll(async () => {
  ({ app, ledger } = await routeApp());
  caller = await newCaller();
});
afterAll(() => app.close());
beforeEach(() => ledger.reset(projectCreate, 'products'));

describe('POST /api/v1/pim/products', () => {
  it('sends CreateProduct in the caller’s scope and answers 201 with the row the read model then holds', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/pim/products',
      headers: caller.headers,
      payload: { title: '  Blue mug ', category: 'kitchen', sku: 'MUG-1' },
    });
    expect(response.statusCode).toBe(201);
    const [sent] = ledger.sent;
    expect(sent).toMatchObject({ aggregate: 'product', type: 'CreateProduct', tenantId: caller.tenantId, orgId: caller.orgId });
    expect(sent?.data).toMatchObject({ title: 'Blue mug', description: null, category: 'kitchen', sku: 'MUG-1' });
    expect(response.json()).toEqual({
      ...productRow(caller, { id: sent?.data.productId, title: 'Blue mug', category: 'kitchen', sku: 'MUG-1' }),
      created_at: at.toISOString(),
      updated_at: at.toISOString(),
    });
  });

  it('derives the id from the Idempotency-Key and sends what the aggregate remembers of the request', async () => {
    const send = () =>
      app.inject({
        method: 'POST',
        url: '/api/v1/pim/products',
        headers: { ...caller.headers, 'idempotency-key': 'import-7' },
        payload: { title: 'Mug' },
      });
    const [first, second] = [await send(), await send()];
    expect(first.json().id).toBe(second.json().id);
    expect(ledger.sent.map(({ idempotency }) => idempotency)).toEqual([
      { key: first.json().id, requestHash: expect.any(String) },
      { key: first.json().id, requestHash: ledger.sent[0]?.idempotency?.requestHash },
    ]);
  });

  it('answers a refusal of the decider with its error: 409', async () => {
    ledger.decide = () => new ConflictError('the Idempotency-Key was used with another body');
    const response = await app.inject({ method: 'POST', url: '/api/v1/pim/products', headers: caller.headers, payload: { title: 'Mug' } });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({
      error: { code: 'conflict', message: 'the Idempotency-Key was used with another body', details: [] },
    });
  });

  it('refuses a body without a title, or with an unknown field, with the documented 400 and sends nothing', async () => {
    const missing = await app.inject({ method: 'POST', url: '/api/v1/pim/products', headers: caller.headers, payload: { category: 'x' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({
      error: {
        code: 'validation_failed',
        message: 'the body field title is required',
        details: [{ path: 'body.title', message: expect.any(String) }],
      },
    });
    const unknown = await app.inject({
      method: 'POST',
      url: '/api/v1/pim/products',
      headers: caller.headers,
      payload: { title: 'Mug', colour: 'blue' },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toMatchObject({ code: 'validation_failed', message: 'the request body has an unknown field colour' });
    expect(ledger.sent).toEqual([]);
  });

  it('answers 404 naming the field for a template the tenant does not have, before sending anything', async () => {
    const templateId = randomUUID();
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/pim/products',
      headers: caller.headers,
      payload: { title: 'Mug', template_id: templateId },
    });
    expect(response.statusCode).toBe(404);
    expect(response.json().error).toEqual({
      code: 'not_found',
      message: `template ${templateId} not found`,
      details: [{ path: 'body.template_id', message: 'no such template' }],
    });
    expect(ledger.sent).toEqual([]);
  });

  it('answers 503 with Retry-After, and sends nothing, while Kafka is down', async () => {
    ledger.down.add('kafka');
    const response = await app.inject({ method: 'POST', url: '/api/v1/pim/products', headers: caller.headers, payload: { title: 'Mug' } });
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('2');
    expect(response.json().error).toMatchObject({ code: 'unavailable', message: expect.stringContaining('kafka is unavailable') });
    expect(ledger.sent).toEqual([]);
  });
});

describe('authentication and tenant headers', () => {
  it('answers 401 without a bearer token and with a token that is not a JWT', async () => {
    const { authorization: _, ...withoutToken } = caller.headers;
    const none = await app.inject({ method: 'GET', url: '/api/v1/pim/products', headers: withoutToken });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toEqual({
      error: { code: 'unauthorized', message: 'an Authorization: Bearer <token> header is required', details: [] },
    });
    const garbage = await app.inject({
      method: 'GET',
      url: '/api/v1/pim/products',
      headers: { ...caller.headers, authorization: 'Bearer x' },
    });
    expect(garbage.statusCode).toBe(401);
  });

  it('answers 403 when the token is another tenant’s, 400 when the tenant header is not a UUID', async () => {
    const other = await newCaller();
    const foreign = await app.inject({
      method: 'GET',
      url: '/api/v1/pim/products',
      headers: { ...caller.headers, authorization: other.headers.authorization! },
    });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().error).toMatchObject({ code: 'forbidden' });
    const malformed = await app.inject({
      method: 'GET',
      url: '/api/v1/pim/products',
      headers: { ...caller.headers, 'x-tenant-id': 'acme' },
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error.details).toEqual([{ path: 'headers.x-tenant-id', message: 'a tenant UUID is required' }]);
  });
});

describe('GET /api/v1/pim/products', () => {
  it('reads only the caller’s products: another tenant’s record is a 404, never a leak', async () => {
    const mine = productRow(caller, { title: 'Mine' });
    const theirs = productRow({ tenantId: randomUUID(), orgId: caller.orgId }, { title: 'Theirs' });
    ledger.tables.products = [mine, theirs];
    const list = await app.inject({ method: 'GET', url: '/api/v1/pim/products', headers: caller.headers });
    expect(list.statusCode).toBe(200);
    expect(list.json().map((product: { title: string }) => product.title)).toEqual(['Mine']);
    expect((await app.inject({ method: 'GET', url: `/api/v1/pim/products/${mine.id}`, headers: caller.headers })).statusCode).toBe(200);
    const foreign = await app.inject({ method: 'GET', url: `/api/v1/pim/products/${theirs.id}`, headers: caller.headers });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: { code: 'not_found', message: `product ${theirs.id} not found`, details: [] } });
  });

  it('pages newest first by limit and offset, and refuses a limit out of range', async () => {
    ledger.tables.products = [1, 2, 3].map((day) =>
      productRow(caller, { title: `day ${day}`, created_at: new Date(Date.UTC(2025, 0, day)) }),
    );
    const page = await app.inject({ method: 'GET', url: '/api/v1/pim/products?limit=1&offset=1', headers: caller.headers });
    expect(page.json().map((product: { title: string }) => product.title)).toEqual(['day 2']);
    const tooMany = await app.inject({ method: 'GET', url: '/api/v1/pim/products?limit=1001', headers: caller.headers });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().error).toMatchObject({ code: 'validation_failed', message: 'the query parameter limit must be at most 1000' });
  });

  it('answers 503 at once while Postgres is down', async () => {
    ledger.down.add('postgres');
    const response = await app.inject({ method: 'GET', url: '/api/v1/pim/products', headers: caller.headers });
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('2');
    expect(response.json().error.code).toBe('unavailable');
  });
});
