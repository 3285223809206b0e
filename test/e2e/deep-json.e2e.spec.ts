import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../http/json-depth.ts';
import { send } from '../support/client.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

// A body nested 100 000 deep once reached JSON.stringify in POST /pim/bulk-jobs and answered 500. Every route that
// takes a JSON body, as the OpenAPI document lists them (a new route is covered by being there), gets such bodies.
const ctx = useServiceAndTenant();

const DEEP = 100_000;
const deepArrays = `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`;
const deepObjects = `${'{"a":'.repeat(DEEP)}{}${'}'.repeat(DEEP)}`;
const METHODS_WITH_BODIES = ['post', 'put', 'patch', 'delete'];

type Operation = { method: string; path: string };
let jsonRoutes: Operation[];

/** The headers every route may want: a tenant's token, and a well-formed webhook signature (so the receiver parses). */
const headers = () => ({ ...ctx.tenant.headers, 'x-unified-signature': '0'.repeat(64) });

const tooDeep = {
  error: { code: 'bad_request', message: `the request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`, details: [] },
};

beforeAll(async () => {
  const document = (await (await fetch(`${ctx.service.baseUrl}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { requestBody?: { content?: Record<string, unknown> } }>>;
  };
  jsonRoutes = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([method, operation]) => METHODS_WITH_BODIES.includes(method) && operation.requestBody?.content?.['application/json'])
      .map(([method]) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, () => randomUUID()) })),
  );
});

describe('JSON bodies nested beyond MAX_JSON_DEPTH', () => {
  it('the OpenAPI document lists the JSON routes, the bulk jobs and the public webhook among them', () => {
    const listed = jsonRoutes.map(({ method, path }) => `${method} ${path}`);
    expect(listed).toEqual(expect.arrayContaining(['POST /api/v1/pim/bulk-jobs', 'POST /unified/webhook', 'POST /api/v1/pim/products']));
  });

  it.each([
    ['arrays', deepArrays],
    ['objects', deepObjects],
  ])('100 000-deep %s: 400 with the error body on every JSON route', async (_kind, body) => {
    const answers: string[] = [];
    for (const { method, path } of jsonRoutes) {
      const response = await send(ctx.service.baseUrl, method, path, { rawBody: body, headers: headers() });
      answers.push(`${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
      expect(response.status, answers.at(-1)).toBe(400);
      expect(response.body, answers.at(-1)).toEqual(tooDeep);
    }
  });

  it('a bulk payload given as JSON text gets the same bound (400 validation_failed naming body.payload)', async () => {
    // An import of one product object whose field is deep: the shape is right, the depth is not.
    const payload = `[{"title":"Deep","colour":${deepArrays}}]`;
    const response = await ctx.tenant.request('POST', '/api/v1/pim/bulk-jobs', { job_type: 'BULK_IMPORT', payload });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.code).toBe('validation_failed');
    expect(response.body.error.details).toEqual([{ path: 'body.payload', message: expect.stringMatching(/more than 64 levels deep/) }]);
  });

  it('a body exactly MAX_JSON_DEPTH deep gets past the parser to the route (its schema answers)', async () => {
    const title = JSON.parse(`${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}`) as unknown;
    const response = await ctx.tenant.request('POST', '/api/v1/pim/products', { title });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.code).toBe('validation_failed');
    expect(response.body.error.details[0].path).toBe('body.title');
  });

  it('the service stays up and serves writes afterwards', async () => {
    expect((await fetch(`${ctx.service.baseUrl}/health/live`)).status).toBe(200);
    const created = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'After the deep bodies' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });
});
