import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import { trustProxySetting } from '../../http/http-config.ts';
import { routeApp } from '../support/route-app.ts';

const ADDRESS_BUDGET = 2;

describe('TRUST_PROXY', () => {
  it.each([
    ['2', 2],
    ['10.0.0.0/8, 127.0.0.1', '10.0.0.0/8,127.0.0.1'],
    ['loopback,uniquelocal', 'loopback,uniquelocal'],
    ['fd00::/8,::1', 'fd00::/8,::1'],
    ['', undefined],
  ])('takes %j', (value, taken) => {
    expect(trustProxySetting.parse(value)).toEqual(taken);
  });

  it.each(['0', 'true', 'proxy.internal', '10.0.0.0/33', '10.0.0.1/8/2', '::1/129', '10.0.0.0/x'])('refuses %j at start-up', (value) => {
    expect(() => loadConfig({ AUTH_DEV_SECRET: 'a-development-secret-0123456789', TRUST_PROXY: value })).toThrow(/TRUST_PROXY/);
  });
});

/** An unverified delivery to the public webhook route, as sent through a proxy for `client`. */
const deliverFor = (app: FastifyInstance, client: string) =>
  app.inject({
    method: 'POST',
    url: '/unified/webhook',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
    payload: JSON.stringify({ connection_id: randomUUID(), event: 'accounting.order.created', data: { id: randomUUID() } }),
  });

describe('the unverified-delivery budget behind a proxy', () => {
  let trusting: FastifyInstance;
  let direct: FastifyInstance;
  const budget = { RATE_LIMIT_WEBHOOK_ADDRESS: String(ADDRESS_BUDGET), RATE_LIMIT_WINDOW_SECONDS: '3600' };

  beforeAll(async () => {
    // inject's peer is 127.0.0.1: the proxy, when trusted.
    ({ app: trusting } = await routeApp(undefined, { ...budget, TRUST_PROXY: '127.0.0.1' }));
    ({ app: direct } = await routeApp(undefined, budget));
  });
  afterAll(async () => {
    await trusting.close();
    await direct.close();
  });

  it('is kept per client named by a trusted proxy', async () => {
    for (let i = 0; i < ADDRESS_BUDGET; i++) expect((await deliverFor(trusting, '203.0.113.1')).statusCode).toBe(401);
    expect((await deliverFor(trusting, '203.0.113.1')).statusCode).toBe(429);
    // Another client behind the same proxy has a budget of its own.
    expect((await deliverFor(trusting, '203.0.113.2')).statusCode).toBe(401);
  });

  it('ignores X-Forwarded-For from a peer that is not trusted: a client cannot pick its own budget', async () => {
    for (let i = 0; i < ADDRESS_BUDGET; i++) expect((await deliverFor(direct, `198.51.100.${i}`)).statusCode).toBe(401);
    const refused = await deliverFor(direct, '198.51.100.99');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
  });
});
