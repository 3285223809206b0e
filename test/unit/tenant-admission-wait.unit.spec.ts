import { randomUUID } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { FakeLedger } from '../support/fake-ledger.ts';
import { newCaller, routeApp } from '../support/route-app.ts';

const { app, ledger } = await routeApp(new FakeLedger(), { RATE_LIMIT_TENANT_IN_FLIGHT: '1', RATE_LIMIT_TENANT_WAIT_MS: '50' });
afterAll(() => app.close());

it("answers 429 with Retry-After to a request kept waiting past RATE_LIMIT_TENANT_WAIT_MS by its tenant's slow ones", async () => {
  const caller = await newCaller();
  const write = () => app.inject({ method: 'DELETE', url: `/api/v1/pim/products/${randomUUID()}`, headers: caller.headers });
  let release = () => {};
  ledger.held = new Promise<void>((resolve) => (release = resolve));
  const slow = write();
  while (ledger.sent.length < 1) await new Promise((resolve) => setImmediate(resolve));
  const waited = await write();
  expect(waited.statusCode).toBe(429);
  expect(waited.json().error).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(/kept this one waiting 0.05 s/) });
  expect(waited.headers['retry-after']).toBe('1');
  release();
  expect((await slow).statusCode).toBe(204);
  expect((await write()).statusCode).toBe(204);
});
