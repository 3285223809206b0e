import { STATUS_CODES } from 'node:http';
import type { FastifyError } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import kafkajs from 'kafkajs';
import { CommandTimeoutError } from '../ledger/command-bus.ts';
import { ConflictError, DomainError, NotFoundError, PayloadTooLargeError, ValidationError, type ErrorDetail } from '../ledger/errors.ts';
import { UnavailableError } from '../ledger/dependencies.ts';
import { ProjectionLagError } from '../ledger/projection-waiter.ts';

// kafkajs re-exports its errors with a spread, which Node's ESM named-export detection cannot see.
const { KafkaJSError } = kafkajs;

export class UnauthorizedError extends Error {}
export class ForbiddenError extends Error {}

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

/** Maps every error the service can raise to a status and body, in exactly one place. */
export function getHttpResponseFromError(error: unknown): HttpErrorResponse {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const where = error.validationContext ?? 'request';
    const details = error.validation.map((issue) => ({
      path: [where, ...issue.instancePath.split('/').filter(Boolean)].join('.'),
      message: issue.message ?? 'is invalid',
    }));
    return respond(400, 'validation_failed', `the ${where} is invalid`, details);
  }
  if (error instanceof DomainError) return respond(statusOf(error), error.code, error.message, error.details);
  if (error instanceof UnauthorizedError) return respond(401, 'unauthorized', error.message);
  if (error instanceof ForbiddenError) return respond(403, 'forbidden', error.message);
  if (error instanceof CommandTimeoutError || error instanceof ProjectionLagError) {
    return unavailable('the ledger did not answer in time; the request may still take effect, retry the read');
  }
  if (error instanceof UnavailableError) return unavailable(`${error.message}; a write in flight may still take effect`);
  if (error instanceof KafkaJSError) return unavailable('the ledger is unavailable; retry later');
  if (isDatabaseUnavailable(error)) return unavailable('the read models are unavailable; retry later');
  const status = (error as FastifyError | undefined)?.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return respond(status, fastifyCodes[status] ?? 'bad_request', (error as Error).message);
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
