import { STATUS_CODES } from 'node:http';

/**
 * The responses of every operation as the service really sends them, beyond what each route declares:
 *
 * - a response without a body (204, 205, 304, and one whose schema admits only null, `z.null()`) declares no content,
 *   not an `application/json` body a client would try to parse;
 * - a redirect declares its `Location` header, required;
 * - the statuses fastify and the edge answer before (or around) any handler, with the one error body: 400 (malformed
 *   URL, missing Host, schema validation) and 503 (a dependency down) everywhere; 401 and 403 where a token is
 *   required; 413 (body too large) and 415 (body not JSON) on every method fastify reads a body for (all but GET and
 *   HEAD: a body sent with a DELETE is read too); 414 where a path parameter could be longer than 100 characters;
 *   429 where a token is required (the tenant's and organization's rate limits and admission);
 * - every 429, those and the ones a route declares itself, with `Retry-After` and the rate-limit headers.
 */

type Json = Record<string, unknown>;
type Response = { description?: string; content?: Record<string, { schema?: Json }>; headers?: Record<string, Json> };
export type DocumentOperation = { parameters?: Array<{ in?: string }>; security?: unknown[]; responses?: Record<string, Response> };

const NO_BODY = new Set(['204', '205', '304']);
const REDIRECTS = new Set(['301', '302', '303', '307', '308']);
/** Methods fastify never reads a body for. */
const BODYLESS_METHODS = new Set(['get', 'head']);

const admitsOnlyNull = (schema: Json | undefined): boolean =>
  Array.isArray(schema?.enum) && schema.enum.length > 0 && schema.enum.every((value) => value === null);

function withoutBodies(responses: Record<string, Response>): void {
  for (const [status, response] of Object.entries(responses)) {
    const schemas = Object.values(response.content ?? {}).map((media) => media.schema);
    if (NO_BODY.has(status) || (schemas.length > 0 && schemas.every(admitsOnlyNull))) delete response.content;
  }
}

function withLocation(responses: Record<string, Response>): void {
  for (const [status, response] of Object.entries(responses)) {
    if (!REDIRECTS.has(status)) continue;
    const headers = response.headers ?? {};
    const name = Object.keys(headers).find((header) => header.toLowerCase() === 'location') ?? 'Location';
    headers[name] = {
      description: 'Where the resource is',
      schema: { type: 'string', format: 'uri' },
      ...headers[name],
      required: true,
    };
    response.headers = headers;
  }
}

const seconds = (description: string): Json => ({ description, required: true, schema: { type: 'integer', minimum: 0 } });

/** What every 429 carries (http/plugins/rate-limits.ts): the budget that refused, and when to try again. */
const RATE_LIMITED_HEADERS: Record<string, Json> = {
  'Retry-After': { ...seconds('Seconds to wait before trying again'), schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Limit': seconds('The size of the budget that refused the request, per window'),
  'RateLimit-Remaining': seconds('What is left of that budget: 0'),
  'RateLimit-Reset': seconds('Seconds until that budget has room again'),
  'RateLimit-Policy': {
    description: 'Every budget the request was checked against, as `<limit>;w=<window seconds>`, comma-separated',
    required: true,
    schema: { type: 'string', pattern: '^\\d+;w=\\d+(, \\d+;w=\\d+)*$' },
  },
};

function withRateLimitHeaders(responses: Record<string, Response>): void {
  const response = responses['429'];
  if (response) response.headers = { ...RATE_LIMITED_HEADERS, ...response.headers };
}

/** The statuses the service can answer `method` on `operation` with, before or around its handler. */
function frameworkStatuses(method: string, operation: DocumentOperation): number[] {
  const statuses = [400, 503];
  if (operation.security === undefined || operation.security.length > 0) statuses.push(401, 403, 429);
  if (!BODYLESS_METHODS.has(method)) statuses.push(413, 415);
  if ((operation.parameters ?? []).some((parameter) => parameter.in === 'path')) statuses.push(414);
  return statuses;
}

/**
 * Declares what the file's comment lists, in place. `operation.security` is read as the finished document has it:
 * undefined for the document's default (a token), `[]` for a public operation.
 */
export function declareResponses(method: string, operation: DocumentOperation, errorSchemaRef: string): void {
  const responses = (operation.responses ??= {});
  withoutBodies(responses);
  withLocation(responses);
  for (const status of frameworkStatuses(method, operation)) {
    responses[status] ??= {
      description: STATUS_CODES[status] ?? String(status),
      content: { 'application/json': { schema: { $ref: errorSchemaRef } } },
    };
  }
  withRateLimitHeaders(responses);
  const byStatus = Object.entries(responses).sort(([a], [b]) => (Number(a) || Infinity) - (Number(b) || Infinity));
  operation.responses = Object.fromEntries(byStatus);
}
