import { STATUS_CODES } from 'node:http';
import type { FastifyError } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { CommandTimeoutError } from '../ledger/command-bus.ts';
import { ConflictError, DomainError, NotFoundError, PayloadTooLargeError, ValidationError, type ErrorDetail } from '../ledger/errors.ts';
import { UnavailableError } from '../ledger/dependencies.ts';
import { isKafkaError } from '../ledger/kafka.ts';
import { ProjectionLagError } from '../ledger/projection-waiter.ts';

export class UnauthorizedError extends Error {}
export class ForbiddenError extends Error {}

/** Over a rate limit or the tenant's requests in progress (http/plugins/rate-limits.ts): 429, retry after so many seconds. */
export class RateLimitedError extends Error {
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The one error body of the API: `{ "error": { "code", "message", "details" } }`. */
export type ErrorBody = { error: { code: string; message: string; details: ErrorDetail[] } };
export type HttpErrorResponse = { statusCode: number; body: ErrorBody; headers?: Record<string, string> };

const respond = (statusCode: number, code: string, message: string, details: ErrorDetail[] = []): HttpErrorResponse => ({
  statusCode,
  body: { error: { code, message, details } },
});

/** Seconds a client should wait before retrying a 503: about how long the service takes to notice a dependency is back. */
export const RETRY_AFTER_SECONDS = 2;

const unavailable = (message: string): HttpErrorResponse => ({
  ...respond(503, 'unavailable', message),
  headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
});

/**
 * SQLSTATE classes and driver codes that mean "the database went away", not "the query is wrong"; knex puts the query
 * before the driver's message (`select … - Connection terminated unexpectedly`).
 */
const isDatabaseUnavailable = (error: unknown): boolean => {
  const e = error as { code?: unknown; name?: unknown; message?: unknown } | undefined;
  if (!e || typeof e !== 'object') return false;
  if (e.name === 'KnexTimeoutError') return true;
  const code = typeof e.code === 'string' ? e.code : '';
  if (/^(08|57P0[1-3]|53300)/.test(code) || ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'].includes(code)) return true;
  return (
    typeof e.message === 'string' &&
    /(^|- )(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/.test(e.message)
  );
};

const statusOf = (error: DomainError): number => {
  if (error instanceof ValidationError) return 400;
  if (error instanceof NotFoundError) return 404;
  if (error instanceof ConflictError) return 409;
  if (error instanceof PayloadTooLargeError) return 413;
  return 400;
};

const fastifyCodes: Record<number, string> = {
  400: 'bad_request',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'request_timeout',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  431: 'headers_too_large',
};

/** fastify's own texts ("Unsupported Media Type", "'/%ZZ' is not a valid url component") as sentences of this API. */
const frameworkMessages: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'the request body must be application/json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'the request body is empty',
  FST_ERR_CTP_INVALID_JSON_BODY: 'the request body is not valid JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'the request body is larger than this endpoint accepts',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'the request body does not have the length its Content-Length header gives',
  FST_ERR_BAD_URL: 'the URL is malformed (a bad percent-encoding)',
  FST_ERR_MAX_PARAM_LENGTH: 'a path parameter is longer than 100 characters',
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: 'the request needs a Content-Type header',
};

/** What a 4xx of fastify's without its own sentence says, by status. */
const statusMessages: Record<number, string> = {
  400: 'the request is malformed',
  404: 'there is no such route',
  405: 'the method is not allowed here',
  406: 'no acceptable representation can be produced',
  408: 'the request did not arrive in time',
  413: 'the request body is too large',
  414: 'the URI is too long',
  415: 'the request body must be application/json',
  431: 'the request headers are too large',
};

type ValidationIssue = { keyword?: string; instancePath: string; message?: string; params?: Record<string, unknown> };

/** How a message names a part of the request: one field of it, and the whole (with its verb). */
const requestParts: Record<string, { field: string; whole: string; is: string; has: string }> = {
  params: { field: 'path parameter', whole: 'the path parameters', is: 'are', has: 'have' },
  querystring: { field: 'query parameter', whole: 'the query', is: 'is', has: 'has' },
  headers: { field: 'header', whole: 'the request headers', is: 'are', has: 'have' },
  body: { field: 'body field', whole: 'the request body', is: 'is', has: 'has' },
};

const fieldOf = (issue: ValidationIssue): string => issue.instancePath.split('/').filter(Boolean).join('.');

const units: Record<string, string> = { string: 'character', array: 'item', set: 'item' };

/** A length or size bound zod reports (`origin`, `minimum`/`maximum`, `inclusive`) as words: "must be at most 100 characters long". */
const boundOf = (keyword: string, params: Record<string, unknown>): string | undefined => {
  const small = keyword === 'too_small';
  const bound = small ? params.minimum : params.maximum;
  if (typeof bound !== 'number' && typeof bound !== 'bigint') return undefined;
  const origin = String(params.origin ?? '');
  const unit = units[origin];
  if (unit) {
    if (small && Number(bound) === 1) return 'must not be empty';
    const plural = `${bound} ${unit}${Number(bound) === 1 ? '' : 's'}`;
    return origin === 'string'
      ? `must be at ${small ? 'least' : 'most'} ${plural} long`
      : `must have at ${small ? 'least' : 'most'} ${plural}`;
  }
  if (origin !== 'number' && origin !== 'int' && origin !== 'bigint') return undefined;
  if (params.inclusive === false) return `must be ${small ? 'greater' : 'less'} than ${bound}`;
  return `must be at ${small ? 'least' : 'most'} ${bound}`;
};

/** What was wrong with one value, as the end of a sentence without its verb's subject ("must be a UUID", "is required"). */
const reasonOf = (issue: ValidationIssue, is: string): string => {
  const params = issue.params ?? {};
  if (issue.keyword === 'invalid_format' && (params.format === 'uuid' || params.format === 'guid')) return 'must be a UUID';
  // fastify validates a missing body as null.
  const missing = /received undefined/.test(issue.message ?? '') || (fieldOf(issue) === '' && /received null/.test(issue.message ?? ''));
  if (issue.keyword === 'invalid_type' && missing) return `${is} required`;
  // The service's own refinements are written to finish such a sentence ("must be an absolute http(s) URL").
  if (issue.keyword === 'custom' && /^must /.test(issue.message ?? '')) return issue.message!;
  if (issue.keyword === 'invalid_type' && typeof params.expected === 'string') return `must be of type ${params.expected}`;
  if (issue.keyword === 'too_small' || issue.keyword === 'too_big') return boundOf(issue.keyword, params) ?? `${is} invalid`;
  return `${is} invalid`;
};

const listOf = (items: string[]): string =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

/**
 * The top-level message of a schema validation error: one sentence naming what was wrong ("the path parameter id
 * must be a UUID", "the request body has an unknown field colour", "the body fields title and sku are invalid");
 * `details` keeps each issue's precise text.
 */
export function validationMessage(where: string, issues: ValidationIssue[]): string {
  const part = requestParts[where] ?? { field: 'field', whole: 'the request', is: 'is', has: 'has' };
  const unknown = issues.flatMap((issue) =>
    issue.keyword === 'unrecognized_keys' && Array.isArray(issue.params?.keys)
      ? (issue.params.keys as string[]).map((key) => [fieldOf(issue), key].filter(Boolean).join('.'))
      : [],
  );
  const others = issues.filter((issue) => issue.keyword !== 'unrecognized_keys');
  const [first] = others;
  if (!first) {
    if (unknown.length === 0) return `${part.whole} ${part.is} invalid`;
    const many = unknown.length > 1;
    if (where === 'querystring')
      return `the query parameter${many ? 's' : ''} ${listOf(unknown)} ${many ? 'are' : 'is'} not taken by this endpoint`;
    return `${part.whole} ${part.has} ${many ? 'unknown fields' : 'an unknown field'} ${listOf(unknown)}`;
  }
  const fields = [...new Set(others.map(fieldOf))];
  if (fields.length === 1 && fields[0] === '' && others.length === 1) return `${part.whole} ${reasonOf(first, part.is)}`;
  if (fields.length === 1 && fields[0] !== '') {
    return `the ${part.field} ${fields[0]} ${others.length === 1 ? reasonOf(first, 'is') : 'is invalid'}`;
  }
  const named = fields.filter(Boolean);
  if (named.length === 0) return `${part.whole} ${part.is} invalid`;
  return `the ${part.field}${named.length > 1 ? 's' : ''} ${listOf(named)} ${named.length > 1 ? 'are' : 'is'} invalid`;
}

const frameworkMessage = (error: FastifyError, status: number): string => {
  if (typeof error.code === 'string' && error.code.startsWith('FST_')) {
    return frameworkMessages[error.code] ?? statusMessages[status] ?? 'the request cannot be handled';
  }
  return error.message;
};

/** Maps every error the service can raise to a status and body, in exactly one place. */
export function getHttpResponseFromError(error: unknown): HttpErrorResponse {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const where = error.validationContext ?? 'request';
    const details = error.validation.map((issue) => ({
      path: [where, ...issue.instancePath.split('/').filter(Boolean)].join('.'),
      message: issue.message ?? 'is invalid',
    }));
    return respond(400, 'validation_failed', validationMessage(where, error.validation), details);
  }
  if (error instanceof DomainError) return respond(statusOf(error), error.code, error.message, error.details);
  if (error instanceof UnauthorizedError) return respond(401, 'unauthorized', error.message);
  if (error instanceof ForbiddenError) return respond(403, 'forbidden', error.message);
  if (error instanceof RateLimitedError) {
    return { ...respond(429, 'rate_limited', error.message), headers: { 'retry-after': String(error.retryAfterSeconds) } };
  }
  if (error instanceof CommandTimeoutError || error instanceof ProjectionLagError) {
    return unavailable('the ledger did not answer in time; the request may still take effect, retry the read');
  }
  if (error instanceof UnavailableError) return unavailable(`${error.message}; a write in flight may still take effect`);
  if (isKafkaError(error)) return unavailable('the ledger is unavailable; retry later');
  if (isDatabaseUnavailable(error)) return unavailable('the read models are unavailable; retry later');
  const status = (error as FastifyError | undefined)?.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return respond(status, fastifyCodes[status] ?? 'bad_request', frameworkMessage(error as FastifyError, status));
  }
  return respond(500, 'internal', 'internal error');
}

/** A request that is not even valid HTTP (node's parser refused it): status and message, before any route runs. */
const clientError = (error: Error & { code?: string }): { statusCode: number; message: string } => {
  if (error.code === 'HPE_HEADER_OVERFLOW') return { statusCode: 431, message: 'the request headers are too large' };
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { statusCode: 408, message: 'the request did not arrive in time' };
  return { statusCode: 400, message: 'the request is not well-formed HTTP' };
};

/**
 * The raw HTTP response for a client error (fastify's `clientErrorHandler`), with the one error body. The
 * connection is closed: after a parse error the rest of what the client sent cannot be trusted.
 */
export function clientErrorResponse(error: Error & { code?: string }): string {
  const { statusCode, body } = getHttpResponseFromError(clientError(error));
  const json = JSON.stringify(body);
  return [
    `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(json)}`,
    'Connection: close',
    '',
    json,
  ].join('\r\n');
}
