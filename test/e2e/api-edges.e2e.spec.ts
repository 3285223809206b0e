import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { send, sendRawHttp } from '../support/client.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

/** Issue 15, "Edges of the API": what clients send that is not the happy path, and what they get back. */
const ctx = useServiceAndTenant({ env: { LOG_LEVEL: 'info' } });
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const expectError = (response: { status: number; body: any }, status: number, code: string) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body).toEqual({ error: { code, message: expect.any(String), details: expect.any(Array) } });
};

const post = (path: string, rawBody: string, contentType: string) =>
  send(ctx.service.baseUrl, 'POST', path, { rawBody, headers: { ...ctx.tenant.headers, 'content-type': contentType } });

describe('media types', () => {
  it('answers a body that is not JSON 415 unsupported_media_type, text/plain included', async () => {
    for (const type of [
      'text/plain',
      'text/plain; charset=utf-8',
      'application/xml',
      'application/octet-stream',
      'multipart/form-data; boundary=x',
    ]) {
      const response = await post('/api/v1/pim/products', '{"title":"Cup"}', type);
      expectError(response, 415, 'unsupported_media_type');
      expect(response.body.error.message, type).toBe('the request body must be application/json');
    }
    expect((await ctx.tenant.request('GET', '/api/v1/pim/products')).body).toEqual([]);
  });

  it('still takes application/json with a charset', async () => {
    const response = await post('/api/v1/pim/brands', '{"name":"Charset"}', 'application/json; charset=utf-8');
    expect(response.status, JSON.stringify(response.body)).toBe(201);
  });
});

describe('Content-Type: application/json without a body', () => {
  const jsonOnly = () => ({ ...ctx.tenant.headers, 'content-type': 'application/json' });

  it('is accepted on a DELETE as if no content type were sent', async () => {
    const product = (await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'To delete' })).body;
    const response = await send(ctx.service.baseUrl, 'DELETE', `/api/v1/pim/products/${product.id}`, { headers: jsonOnly() });
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
    expect((await ctx.tenant.request('GET', `/api/v1/pim/products/${product.id}`)).status).toBe(404);
  });

  it('is accepted on a GET, with and without Content-Length: 0', async () => {
    for (const headers of [jsonOnly(), { ...jsonOnly(), 'content-length': '0' }]) {
      const response = await send(ctx.service.baseUrl, 'GET', '/api/v1/pim/categories', { headers });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
    }
  });

  it("leaves a POST that needs a body to the route's own validation error", async () => {
    const response = await send(ctx.service.baseUrl, 'POST', '/api/v1/pim/products', { rawBody: '', headers: jsonOnly() });
    expectError(response, 400, 'validation_failed');
    expect(response.body.error.message).toBe('the request body is required');
    expect(response.body.error.details.map((d: { path: string }) => d.path)).toEqual(['body']);
  });
});

describe('an HTTP/1.1 request without a Host header', () => {
  it('gets 400 with the error body, and the connection is closed', async () => {
    const response = await sendRawHttp(ctx.service.baseUrl, 'GET /health/live HTTP/1.1\r\nConnection: keep-alive\r\n\r\n');
    expectError(response, 400, 'bad_request');
    expect(response.body.error.message).toBe('an HTTP/1.1 request needs a Host header');
  });

  it('is refused on an API route too, before authentication', async () => {
    const response = await sendRawHttp(ctx.service.baseUrl, 'GET /api/v1/pim/products HTTP/1.1\r\n\r\n');
    expectError(response, 400, 'bad_request');
  });

  it('is not needed in HTTP/1.0', async () => {
    const response = await sendRawHttp(ctx.service.baseUrl, 'GET /health/live HTTP/1.0\r\n\r\n');
    expect(response.status).toBe(200);
  });
});

describe('categories and brands take both spellings of a field', () => {
  it('takes parentId and parent_id, and answers parent_id', async () => {
    const parent = (await ctx.tenant.request('POST', '/api/v1/pim/categories', { name: 'Kitchen', slug: 'kitchen' })).body;
    const camel = await ctx.tenant.request('POST', '/api/v1/pim/categories', { name: 'Cups', slug: 'cups', parentId: parent.id });
    expect(camel.status, JSON.stringify(camel.body)).toBe(201);
    expect(camel.body.parent_id).toBe(parent.id);
    expect(camel.body).not.toHaveProperty('parentId');
    const snake = await ctx.tenant.request('POST', '/api/v1/pim/categories', { name: 'Pans', slug: 'pans', parent_id: parent.id });
    expect(snake.status, JSON.stringify(snake.body)).toBe(201);
    expect(snake.body.parent_id).toBe(parent.id);
    // What was read can be sent back (less what the service sets itself).
    const { name, description, parent_id } = snake.body;
    const again = await ctx.tenant.request('POST', '/api/v1/pim/categories', { name, slug: 'pans-2', description, parent_id });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.parent_id).toBe(parent.id);
    // Either spelling is checked as the other is.
    const missing = await ctx.tenant.request('POST', '/api/v1/pim/categories', { name: 'Lost', slug: 'lost', parent_id: randomUUID() });
    expectError(missing, 404, 'not_found');
  });

  it('refuses both spellings in one body, naming them', async () => {
    const parent = (await ctx.tenant.request('POST', '/api/v1/pim/categories', { name: 'Garden', slug: 'garden' })).body;
    const both = await ctx.tenant.request('POST', '/api/v1/pim/categories', {
      name: 'Tools',
      slug: 'tools',
      parentId: parent.id,
      parent_id: parent.id,
    });
    expectError(both, 400, 'validation_failed');
    expect(both.body.error.message).toMatch(/parent_id.*parentId/);
    expect(both.body.error.details).toEqual([{ path: 'body.parent_id', message: expect.stringContaining('parentId') }]);

    const brand = await ctx.tenant.request('POST', '/api/v1/pim/brands', {
      name: 'Twice',
      logoUrl: 'https://cdn.example.com/a.png',
      logo_url: 'https://cdn.example.com/b.png',
    });
    expectError(brand, 400, 'validation_failed');
    expect(brand.body.error.message).toMatch(/logo_url.*logoUrl/);
    expect(brand.body.error.details).toEqual([{ path: 'body.logo_url', message: expect.stringContaining('logoUrl') }]);
    expect((await ctx.tenant.request('GET', '/api/v1/pim/categories')).body.map((c: { slug: string }) => c.slug)).not.toContain('tools');
  });

  it('takes logoUrl and logo_url, checks both as URLs, and answers logo_url', async () => {
    const camel = await ctx.tenant.request('POST', '/api/v1/pim/brands', { name: 'Camel', logoUrl: 'https://cdn.example.com/c.png' });
    expect(camel.status, JSON.stringify(camel.body)).toBe(201);
    expect(camel.body.logo_url).toBe('https://cdn.example.com/c.png');
    expect(camel.body).not.toHaveProperty('logoUrl');
    const snake = await ctx.tenant.request('POST', '/api/v1/pim/brands', { name: 'Snake', logo_url: 'https://cdn.example.com/s.png' });
    expect(snake.status, JSON.stringify(snake.body)).toBe(201);
    expect(snake.body.logo_url).toBe('https://cdn.example.com/s.png');
    for (const body of [
      { name: 'Bad', logoUrl: 'ftp://x' },
      { name: 'Bad', logo_url: 'ftp://x' },
    ]) {
      const refused = await ctx.tenant.request('POST', '/api/v1/pim/brands', body);
      expectError(refused, 400, 'validation_failed');
      expect(refused.body.error.message).toMatch(/^the body field logo_?[uU]rl must be an absolute http\(s\) URL$/);
    }
  });
});

describe('paging the product list', () => {
  const COUNT = 130;
  let created: string[] = [];
  const list = (query: string) => ctx.tenant.request('GET', `/api/v1/pim/products${query}`);

  it('reaches every product: the 100 most recent by default, the rest by limit and offset', async () => {
    const other = await ctx.newTenant();
    const ids: string[] = [];
    for (let start = 0; start < COUNT; start += 10) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, (_, i) => other.request('POST', '/api/v1/pim/products', { title: `Product ${start + i}` })),
      );
      for (const response of batch) {
        expect(response.status, JSON.stringify(response.body)).toBe(201);
        ids.push(response.body.id);
      }
    }
    created = ids;
    const listOther = (query: string) => other.request('GET', `/api/v1/pim/products${query}`);

    const first = await listOther('');
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(100);
    // Newest first; ties on created_at broken by id.
    const order = (rows: { id: string; created_at: string }[]) =>
      [...rows].sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? 1 : -1));
    expect(first.body.map((p: { id: string }) => p.id)).toEqual(order(first.body).map((p) => p.id));
    expect((await listOther('?limit=100&offset=0')).body).toEqual(first.body);

    const seen: string[] = [];
    for (let offset = 0; ; offset += 37) {
      const page = await listOther(`?limit=37&offset=${offset}`);
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      seen.push(...page.body.map((p: { id: string }) => p.id));
      if (page.body.length < 37) break;
    }
    expect(seen).toHaveLength(COUNT);
    expect(new Set(seen)).toEqual(new Set(created));
    const all = await listOther('?limit=1000');
    expect(all.body.map((p: { id: string }) => p.id)).toEqual(seen);
    expect((await listOther(`?offset=${COUNT}`)).body).toEqual([]);
    expect((await listOther('?offset=100')).body).toHaveLength(COUNT - 100);
  });

  it('refuses limit and offset out of bounds or not in decimal digits', async () => {
    for (const query of ['?limit=0', '?limit=1001', '?limit=-1', '?offset=-1', '?limit=1e2', '?offset=0x10', '?limit=', '?limit=ten']) {
      const response = await list(query);
      expectError(response, 400, 'validation_failed');
      const field = query.slice(1).split('=')[0];
      expect(
        response.body.error.details.map((d: { path: string }) => d.path),
        query,
      ).toEqual([`querystring.${field}`]);
      expect(response.body.error.message, query).toMatch(new RegExp(`^the query parameter ${field} `));
    }
    expectError(await list('?page=2'), 400, 'validation_failed');
    expect((await list('?limit=1000&offset=0')).status).toBe(200);
    expect((await list('?limit=1')).status).toBe(200);
  });
});

describe('X-Correlation-ID', () => {
  it('is echoed when the client gives one, on success, on an error and on an unknown route', async () => {
    const id = `trace-${randomUUID()}`;
    const ok = await ctx.tenant.request('GET', '/api/v1/pim/categories', undefined, { 'x-correlation-id': id });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-correlation-id')).toBe(id);
    const invalid = await ctx.tenant.request('GET', '/api/v1/pim/products/not-a-uuid', undefined, { 'x-correlation-id': id });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('x-correlation-id')).toBe(id);
    const unauthorized = await send(ctx.service.baseUrl, 'GET', '/api/v1/pim/products', { headers: { 'x-correlation-id': id } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('x-correlation-id')).toBe(id);
    const unknown = await send(ctx.service.baseUrl, 'GET', '/nowhere', { headers: { 'x-correlation-id': id } });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-correlation-id')).toBe(id);
    const unsupported = await send(ctx.service.baseUrl, 'POST', '/api/v1/pim/products', {
      rawBody: 'x',
      headers: { ...ctx.tenant.headers, 'content-type': 'text/plain', 'x-correlation-id': id },
    });
    expect(unsupported.status).toBe(415);
    expect(unsupported.headers.get('x-correlation-id')).toBe(id);
    const badUrl = await send(ctx.service.baseUrl, 'GET', '/api/v1/pim/products/%ZZ', { headers: { 'x-correlation-id': id } });
    expect(badUrl.status).toBe(400);
    expect(badUrl.headers.get('x-correlation-id')).toBe(id);
  });

  it('is a generated UUID when the client gives none or an unusable one', async () => {
    const none = await send(ctx.service.baseUrl, 'GET', '/health/live');
    const generated = none.headers.get('x-correlation-id');
    expect(generated).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const again = await send(ctx.service.baseUrl, 'GET', '/health/live');
    expect(again.headers.get('x-correlation-id')).not.toBe(generated);
    const unusable = await send(ctx.service.baseUrl, 'GET', '/health/live', {
      headers: { 'x-correlation-id': 'has spaces and ; semicolons' },
    });
    expect(unusable.headers.get('x-correlation-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("puts the request's tenant and user on its log lines once authenticated", async () => {
    const id = `log-${randomUUID()}`;
    expect((await ctx.tenant.request('GET', '/api/v1/pim/brands', undefined, { 'x-correlation-id': id })).status).toBe(200);
    const logFile = join(root, '.stack', 'logs', 'test-services', `${ctx.service.namespace}.log`);
    const userId = JSON.parse(Buffer.from(ctx.tenant.token.split('.')[1]!, 'base64url').toString()).sub;
    let lines: any[] = [];
    for (let attempt = 0; attempt < 50; attempt++) {
      lines = readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((line) => line.includes(id))
        .map((line) => JSON.parse(line));
      if (lines.some((line) => line.msg === 'request completed')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const completed = lines.find((line) => line.msg === 'request completed');
    expect(completed, JSON.stringify(lines)).toMatchObject({ reqId: id, tenant_id: ctx.tenant.tenantId, user_id: userId });
  });
});

describe('error messages read as sentences', () => {
  it('names the part and the field that is wrong', async () => {
    const cases: [string, string, unknown, RegExp][] = [
      ['GET', '/api/v1/pim/products/not-a-uuid', undefined, /^the path parameter id must be a UUID$/],
      ['POST', '/api/v1/pim/products', {}, /^the body field title is required$/],
      ['POST', '/api/v1/pim/products', { title: '   ' }, /^the body field title must not be empty$/],
      ['POST', '/api/v1/pim/products', { title: 'x'.repeat(501) }, /^the body field title must be at most 500 characters long$/],
      ['GET', '/api/v1/pim/products?limit=1001', undefined, /^the query parameter limit must be at most 1000$/],
      ['POST', '/api/v1/pim/products', { title: 'ok', colour: 'red' }, /^the request body has an unknown field colour$/],
      ['POST', '/api/v1/pim/products', { title: 42, description: 7 }, /^the body fields title and description are invalid$/],
      ['POST', '/api/v1/pim/products', [1], /^the request body must be of type object$/],
      ['GET', '/api/v1/pim/products?colour=red', undefined, /^the query parameter colour is not taken by this endpoint$/],
    ];
    for (const [method, path, body, message] of cases) {
      const response = await ctx.tenant.request(method, path, body);
      expectError(response, 400, 'validation_failed');
      expect(response.body.error.message, `${method} ${path} ${JSON.stringify(body)}`).toMatch(message);
    }
  });

  it("never shows fastify's own texts", async () => {
    const h = ctx.tenant.headers;
    const malformed = await send(ctx.service.baseUrl, 'POST', '/api/v1/pim/products', { rawBody: '{"title":', headers: h });
    expectError(malformed, 400, 'bad_request');
    expect(malformed.body.error.message).toBe('the request body is not valid JSON');
    const badUrl = await ctx.tenant.request('GET', '/api/v1/pim/products/%ZZ');
    expect(badUrl.body.error.message).toBe('the URL is malformed (a bad percent-encoding)');
    const longParam = await ctx.tenant.request('GET', `/api/v1/pim/products/${'a'.repeat(200)}`);
    expect(longParam.body.error.message).toBe('a path parameter is longer than 100 characters');
  });
});
