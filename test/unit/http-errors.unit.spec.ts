import { KafkaJSConnectionError } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { CommandTimeoutError } from '../../ledger/command-bus.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import { ProjectionLagError } from '../../ledger/projection-waiter.ts';
import { ForbiddenError, getHttpResponseFromError, RETRY_AFTER_SECONDS, UnauthorizedError } from '../../http/errors.ts';
import { UnavailableError } from '../../ledger/dependencies.ts';

describe('getHttpResponseFromError', () => {
  it.each([
    [new ValidationError('bad', [{ path: 'body.title', message: 'required' }]), 400, 'validation_failed'],
    [new UnauthorizedError('no token'), 401, 'unauthorized'],
    [new ForbiddenError('not yours'), 403, 'forbidden'],
    [new NotFoundError('gone'), 404, 'not_found'],
    [new ConflictError('taken'), 409, 'conflict'],
    [Object.assign(new Error('Body is not valid JSON'), { statusCode: 400 }), 400, 'bad_request'],
    [Object.assign(new Error('Request body is too large'), { statusCode: 413 }), 413, 'payload_too_large'],
    [Object.assign(new Error('Unsupported Media Type'), { statusCode: 415 }), 415, 'unsupported_media_type'],
    [new CommandTimeoutError('c1'), 503, 'unavailable'],
    [new ProjectionLagError('behind'), 503, 'unavailable'],
    [new KafkaJSConnectionError('down'), 503, 'unavailable'],
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

  it('tells a client when to retry a 503, and only a 503', () => {
    expect(getHttpResponseFromError(new UnavailableError('kafka')).headers).toEqual({ 'retry-after': String(RETRY_AFTER_SECONDS) });
    expect(getHttpResponseFromError(new CommandTimeoutError('c1')).headers).toEqual({ 'retry-after': String(RETRY_AFTER_SECONDS) });
    expect(getHttpResponseFromError(new ConflictError('taken')).headers).toBeUndefined();
  });

  it('never shows the message of an unexpected error', () => {
    const { body } = getHttpResponseFromError(new Error('password=hunter2 at db.ts:12'));
    expect(body.error.message).toBe('internal error');
  });

  it('keeps the field details of a domain validation error', () => {
    const { body } = getHttpResponseFromError(new ValidationError('bad', [{ path: 'body.title', message: 'required' }]));
    expect(body.error.details).toEqual([{ path: 'body.title', message: 'required' }]);
  });
});
