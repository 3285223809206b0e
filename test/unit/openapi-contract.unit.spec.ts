import { describe, expect, it } from 'vitest';
import { OpenapiContract } from '../support/openapi-contract.ts';

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const error = { $ref: '#/components/schemas/Error' };

const contract = new OpenapiContract({
  components: {
    schemas: { Error: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } },
  },
  paths: {
    '/things/{id}': {
      get: {
        responses: {
          '200': {
            description: 'OK',
            ...json({ type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] }),
          },
          '4XX': { description: 'Client error', ...json(error) },
        },
      },
      delete: { responses: { '204': { description: 'No Content' }, default: { description: 'Error', ...json(error) } } },
    },
    '/things/mine': { get: { responses: { '200': { description: 'OK', ...json({ type: 'array' }) } } } },
    '/feed': {
      get: {
        responses: {
          '302': {
            description: 'Found',
            headers: {
              location: { required: true, schema: { type: 'string', format: 'uri' } },
              'x-count': { schema: { type: 'integer', minimum: 0 } },
            },
          },
        },
      },
    },
    '/text': { get: { responses: { '200': { description: 'OK', content: { 'text/*': { schema: { type: 'string' } } } } } } },
  },
});

const jsonHeaders = new Headers({ 'content-type': 'application/json; charset=utf-8' });
const get = (path: string, status: number, body: string, headers = jsonHeaders) =>
  contract.check({ method: 'get', path, status, headers, body });

describe('a response judged by the OpenAPI document', () => {
  it('belongs to the operation its method and path match, a literal segment before a parameter', () => {
    expect(get('/things/mine', 200, '[]')).toEqual({ operation: 'GET /things/mine', problems: [] });
    expect(get('/things/6f1c2a9e-4b1d-4c7e-9a55-0d3b7f2e8c11', 200, '{"id":"6f1c2a9e-4b1d-4c7e-9a55-0d3b7f2e8c11"}')).toEqual({
      operation: 'GET /things/{id}',
      problems: [],
    });
    expect(get('/things', 200, '[]')).toBeUndefined();
    expect(contract.check({ method: 'POST', path: '/things/mine', status: 200, headers: jsonHeaders, body: '[]' })).toBeUndefined();
  });

  it('has a declared status: itself, its range or default', () => {
    expect(get('/things/x', 404, '{"message":"no"}')?.problems).toEqual([]);
    const deleted = (status: number, body: string) =>
      contract.check({ method: 'DELETE', path: '/things/x', status, headers: jsonHeaders, body })?.problems;
    expect(deleted(503, '{"message":"later"}')).toEqual([]);
    expect(get('/things/x', 500, '{"message":"oops"}')?.problems).toEqual(['status 500 is not declared (declared: 200, 4XX)']);
  });

  it('has the declared body: media type, JSON, schema', () => {
    expect(get('/things/x', 200, '{"id":"not-a-uuid"}')?.problems).toEqual([
      expect.stringMatching(/^the body does not match the schema: \/id must match format "uuid"/),
    ]);
    expect(get('/things/x', 200, '{"id":')?.problems).toEqual([expect.stringMatching(/^the body is not JSON/)]);
    expect(get('/things/x', 200, '', new Headers())?.problems).toEqual([
      expect.stringMatching(/^the body's media type undefined is not declared/),
    ]);
    expect(get('/things/x', 200, '<p/>', new Headers({ 'content-type': 'text/html' }))?.problems).toEqual([
      "the body's media type text/html is not declared (declared: application/json)",
    ]);
    expect(get('/text', 200, 'hello', new Headers({ 'content-type': 'text/plain' }))?.problems).toEqual([]);
  });

  it('has no body where no content is declared', () => {
    const deleted = (body: string) =>
      contract.check({ method: 'DELETE', path: '/things/x', status: 204, headers: new Headers(), body })?.problems;
    expect(deleted('')).toEqual([]);
    expect(deleted('null')).toEqual(['no content is declared, yet the body is 4 characters of undefined']);
  });

  it('has its required headers, each valid when present', () => {
    const feed = (headers: Record<string, string>) => get('/feed', 302, '', new Headers(headers))?.problems;
    expect(feed({ location: 'https://cdn.example.com/feed.json', 'x-count': '3' })).toEqual([]);
    expect(feed({})).toEqual(['the required header location is missing']);
    expect(feed({ location: 'not a uri', 'x-count': '-1' })).toEqual([
      expect.stringMatching(/^the header location: not a uri does not match its schema: \/ must match format "uri"/),
      expect.stringMatching(/^the header x-count: -1 does not match its schema: \/ must be >= 0/),
    ]);
  });
});
