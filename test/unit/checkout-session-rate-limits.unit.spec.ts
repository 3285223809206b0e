import { randomUUID } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { acpCredentialsOf, requestSignature } from '../../commands/acp/acp-credentials.ts';
import { DEVELOPMENT_WEBHOOK_SECRET_KEY } from '../../commands/integrations/webhook-secret.ts';
import { acpProblems } from '../support/acp-checkout-schema.ts';
import { FakeLedger } from '../support/fake-ledger.ts';
import { routeApp } from '../support/route-app.ts';

const [tenantId, orgId] = [randomUUID(), randomUUID()];
const credentials = acpCredentialsOf(DEVELOPMENT_WEBHOOK_SECRET_KEY, tenantId, orgId, 0);
const { app } = await routeApp(new FakeLedger({ checkout_sessions: [], webhook_secrets: [] }), { RATE_LIMIT_TENANT_REQUESTS: '2' });
afterAll(() => app.close());

const get = (path: string) => {
  const url = `/api/v1/ucp/acp/${tenantId}/${orgId}${path}`;
  const timestamp = new Date().toISOString();
  return app.inject({
    method: 'GET',
    url,
    headers: {
      authorization: `Bearer ${credentials.apiKey}`,
      'api-version': '2026-04-17',
      timestamp,
      signature: requestSignature(credentials.signingSecret, timestamp, 'GET', url, ''),
    },
  });
};

it("holds an agent to its tenant's request budget: 429 as an ACP error with Retry-After and RateLimit headers", async () => {
  const answers = [];
  for (let i = 0; i < 3; i++) answers.push(await get(`/checkout_sessions/${randomUUID()}`));
  expect(answers.map((a) => a.statusCode)).toEqual([404, 404, 429]);
  const refused = answers[2]!;
  expect(refused.json()).toMatchObject({ type: 'invalid_request', code: 'rate_limited' });
  expect(acpProblems('Error', refused.json())).toEqual([]);
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  expect(refused.headers['ratelimit-limit']).toBe('2');
});
