import { describe, expect, it } from 'vitest';
import { CommandTimeoutError } from '../../ledger/command-bus.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import { ProjectionLagError } from '../../ledger/projection-waiter.ts';
import {
  clientErrorResponse,
  ForbiddenError,
  getHttpResponseFromError,
  RateLimitedError,
  RETRY_AFTER_SECONDS,
  UnauthorizedError,
  validationMessage,
} from '../../http/errors.ts';
import { UnavailableError } from '../../ledger/dependencies.ts';
import { kafkaConnectionError } from '../../ledger/kafka.ts';

describe('getHttpResponseFromError', () => {
  it.each([
    [new ValidationError('bad', [{ path: 'body.title', message: 'required' }]), 400, 'validation_failed'],
    [new UnauthorizedError('no token'), 401, 'unauthorized'],
    [new ForbiddenError('not yours'), 403, 'forbidden'],
    [new NotFoundError('gone'), 404, 'not_found'],
    [new ConflictError('taken'), 409, 'conflict'],
    [new RateLimitedError('over the limit', 7), 429, 'rate_limited'],
    [Object.assign(new Error('Body is not valid JSON'), { statusCode: 400 }), 400, 'bad_request'],
    [Object.assign(new Error('Request body is too large'), { statusCode: 413 }), 413, 'payload_too_large'],
    [Object.assign(new Error('Unsupported Media Type'), { statusCode: 415 }), 415, 'unsupported_media_type'],
    [
      Object.assign(new Error('Unsupported Media Type'), { statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }),
      415,
      'unsupported_media_type',
    ],
    [Object.assign(new Error("'/%ZZ' is not a valid url component"), { statusCode: 400, code: 'FST_ERR_BAD_URL' }), 400, 'bad_request'],
    [Object.assign(new Error('an HTTP/1.1 request needs a Host header'), { statusCode: 400 }), 400, 'bad_request'],
    [Object.assign(new Error('Method Not Allowed'), { statusCode: 405, code: 'FST_ERR_SOMETHING_NEW' }), 405, 'method_not_allowed'],
    [new CommandTimeoutError('c1'), 503, 'unavailable'],
    [new ProjectionLagError('behind'), 503, 'unavailable'],
    [kafkaConnectionError('down'), 503, 'unavailable'],
    [new UnavailableError('kafka'), 503, 'unavailable'],
    [new UnavailableError('postgres'), 503, 'unavailable'],
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), 503, 'unavailable'],
    [Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), 503, 'unavailable'],
    [Object.assign(new Error('the database system is starting up'), { code: '57P03' }), 503, 'unavailable'],
    [Object.assign(new Error('connection failure'), { code: '08006' }), 503, 'unavailable'],
    [new Error('Connection terminated unexpectedly'), 503, 'unavailable'],
    [new Error('select * from "rm_catalog"."products" where "id" = $1 limit $2 - Connection terminated unexpectedly'), 503, 'unavailable'],
    [Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError' }), 503, 'unavailable'],
    [Object.assign(new Error('value out of range'), { code: '22003' }), 500, 'internal'],
    [new TypeError('a bug'), 500, 'internal'],
  ])('maps %s to %i %s', (error, status, code) => {
    const { statusCode, body } = getHttpResponseFromError(error);
    expect(statusCode).toBe(status);
    expect(body.error.code).toBe(code);
    expect(Array.isArray(body.error.details)).toBe(true);
  });

  it('tells a client when to retry a 503 and a 429, and only those', () => {
    expect(getHttpResponseFromError(new UnavailableError('kafka')).headers).toEqual({ 'retry-after': String(RETRY_AFTER_SECONDS) });
    expect(getHttpResponseFromError(new CommandTimeoutError('c1')).headers).toEqual({ 'retry-after': String(RETRY_AFTER_SECONDS) });
    expect(getHttpResponseFromError(new ConflictError('taken')).headers).toBeUndefined();
    expect(getHttpResponseFromError(new RateLimitedError('over the limit', 7)).headers).toEqual({ 'retry-after': '7' });
  });

  it('never shows the message of an unexpected error', () => {
    const { body } = getHttpResponseFromError(new Error('password=hunter2 at db.ts:12'));
    expect(body.error.message).toBe('internal error');
  });

  it('keeps the field details of a domain validation error', () => {
    const { body } = getHttpResponseFromError(new ValidationError('bad', [{ path: 'body.title', message: 'required' }]));
    expect(body.error.details).toEqual([{ path: 'body.title', message: 'required' }]);
  });

  it.each([
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415, 'Unsupported Media Type', 'the request body must be application/json'],
    [
      'FST_ERR_CTP_INVALID_JSON_BODY',
      400,
      "Body is not valid JSON but content-type is set to 'application/json'",
      'the request body is not valid JSON',
    ],
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413, 'Request body is too large', 'the request body is larger than this endpoint accepts'],
    ['FST_ERR_BAD_URL', 400, "'/%ZZ' is not a valid url component", 'the URL is malformed (a bad percent-encoding)'],
    ['FST_ERR_MAX_PARAM_LENGTH', 414, "'/x' is longer than 100", 'a path parameter is longer than 100 characters'],
    ['FST_ERR_UNKNOWN_TO_US', 405, 'Method Not Allowed', 'the method is not allowed here'],
  ])("words fastify's %s as a sentence of the API", (code, status, fastifyText, message) => {
    const { statusCode, body } = getHttpResponseFromError(Object.assign(new Error(fastifyText), { statusCode: status, code }));
    expect(statusCode).toBe(status);
    expect(body.error.message).toBe(message);
  });

  it("keeps the service's own 4xx texts", () => {
    const { body } = getHttpResponseFromError(Object.assign(new Error('no route for GET /x'), { statusCode: 404 }));
    expect(body.error.message).toBe('no route for GET /x');
  });

  it('answers a request that is not well-formed HTTP with the one error body', () => {
    const raw = clientErrorResponse(Object.assign(new Error('Parse Error'), { code: 'HPE_INVALID_HEADER_TOKEN' }));
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(raw.split('\r\n\r\n')[1]!)).toEqual({
      error: { code: 'bad_request', message: 'the request is not well-formed HTTP', details: [] },
    });
  });
});

describe('validationMessage', () => {
  const issue = (keyword: string, instancePath: string, message: string, params: Record<string, unknown> = {}) => ({
    keyword,
    instancePath,
    message,
    params,
  });
  it.each([
    ['params', [issue('invalid_format', '/id', 'Invalid UUID', { format: 'guid' })], 'the path parameter id must be a UUID'],
    ['params', [issue('invalid_format', '/orderID', 'Invalid UUID', { format: 'uuid' })], 'the path parameter orderID must be a UUID'],
    [
      'body',
      [issue('invalid_type', '/title', 'Invalid input: expected string, received undefined', { expected: 'string' })],
      'the body field title is required',
    ],
    [
      'body',
      [issue('invalid_type', '/title', 'Invalid input: expected string, received null', { expected: 'string' })],
      'the body field title must be of type string',
    ],
    [
      'body',
      [issue('invalid_type', '', 'Invalid input: expected object, received null', { expected: 'object' })],
      'the request body is required',
    ],
    [
      'body',
      [issue('invalid_type', '', 'Invalid input: expected object, received array', { expected: 'object' })],
      'the request body must be of type object',
    ],
    ['body', [issue('too_small', '/title', 'Too small: expected string to have >=1 characters')], 'the body field title is invalid'],
    ['body', [issue('too_small', '/line_items/0/quantity', 'Too small')], 'the body field line_items.0.quantity is invalid'],
    [
      'body',
      [issue('too_small', '/title', 'Too small', { origin: 'string', minimum: 1, inclusive: true })],
      'the body field title must not be empty',
    ],
    [
      'body',
      [issue('too_big', '/title', 'Too big', { origin: 'string', maximum: 500, inclusive: true })],
      'the body field title must be at most 500 characters long',
    ],
    [
      'body',
      [issue('too_small', '/slug', 'Too small', { origin: 'string', minimum: 3, inclusive: true })],
      'the body field slug must be at least 3 characters long',
    ],
    [
      'body',
      [issue('too_big', '/line_items', 'Too big', { origin: 'array', maximum: 250, inclusive: true })],
      'the body field line_items must have at most 250 items',
    ],
    [
      'body',
      [issue('too_small', '/line_items', 'Too small', { origin: 'array', minimum: 1, inclusive: true })],
      'the body field line_items must not be empty',
    ],
    [
      'querystring',
      [issue('too_small', '/limit', 'Too small', { origin: 'number', minimum: 1, inclusive: true })],
      'the query parameter limit must be at least 1',
    ],
    [
      'querystring',
      [issue('too_big', '/limit', 'Too big', { origin: 'number', maximum: 1000, inclusive: true })],
      'the query parameter limit must be at most 1000',
    ],
    [
      'body',
      [issue('too_small', '/delta', 'Too small', { origin: 'number', minimum: 0, inclusive: false })],
      'the body field delta must be greater than 0',
    ],
    ['body', [issue('too_big', '/x', 'Too big', { origin: 'date', maximum: 1, inclusive: true })], 'the body field x is invalid'],
    ['body', [issue('too_small', '/title', 'a'), issue('custom', '/title', 'b')], 'the body field title is invalid'],
    ['body', [issue('too_small', '/title', 'a'), issue('invalid_type', '/sku', 'b')], 'the body fields title and sku are invalid'],
    ['body', [issue('custom', '/logo_url', 'must be an absolute http(s) URL')], 'the body field logo_url must be an absolute http(s) URL'],
    [
      'body',
      [issue('custom', '/parent_id', 'must not be given together with parentId: they are one field, spelt two ways')],
      'the body field parent_id must not be given together with parentId: they are one field, spelt two ways',
    ],
    [
      'body',
      [issue('unrecognized_keys', '', 'Unrecognized key: "colour"', { keys: ['colour'] })],
      'the request body has an unknown field colour',
    ],
    ['body', [issue('unrecognized_keys', '', 'Unrecognized keys', { keys: ['a', 'b'] })], 'the request body has unknown fields a and b'],
    ['body', [issue('unrecognized_keys', '/set', 'Unrecognized key', { keys: ['x'] })], 'the request body has an unknown field set.x'],
    [
      'querystring',
      [issue('unrecognized_keys', '', 'Unrecognized key: "page"', { keys: ['page'] })],
      'the query parameter page is not taken by this endpoint',
    ],
    ['querystring', [issue('too_big', '/limit', 'Too big: expected number to be <=100')], 'the query parameter limit is invalid'],
    ['headers', [issue('too_big', '/idempotency-key', 'Too big')], 'the header idempotency-key is invalid'],
    [
      'params',
      [issue('invalid_format', '/a', 'x', { format: 'guid' }), issue('invalid_format', '/b', 'y', { format: 'guid' })],
      'the path parameters a and b are invalid',
    ],
    ['body', [], 'the request body is invalid'],
  ])('%s %j reads "%s"', (where, issues, message) => {
    expect(validationMessage(where, issues)).toBe(message);
  });

  it('keeps every precise issue in details while the message sums them up', () => {
    const error = Object.assign(new Error('body/title Too small'), {
      validation: [
        {
          ...issue('too_small', '/title', 'Too small: expected string to have >=1 characters'),
          [Symbol.for('ZodFastifySchemaValidationError')]: true,
        },
      ],
      validationContext: 'body',
    });
    const { statusCode, body } = getHttpResponseFromError(error);
    expect(statusCode).toBe(400);
    expect(body.error).toEqual({
      code: 'validation_failed',
      message: 'the body field title is invalid',
      details: [{ path: 'body.title', message: 'Too small: expected string to have >=1 characters' }],
    });
  });
});
