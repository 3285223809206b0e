import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { devToken } from '../../bin/token.ts';
import { buildApp } from '../../http/app.ts';
import { loadConfig } from '../../config.ts';
import { createLogger } from '../../ledger/logger.ts';
import { LedgerMetrics } from '../../ledger/metrics.ts';
import { FakeLedger } from './fake-ledger.ts';

const ROUTE_TEST_SECRET = 'route-tests-development-secret';

/**
 * The service's own app (every route, the auth and the one error mapping) over a FakeLedger: no Kafka, registry or
 * Postgres, requests sent with `app.inject`. `env`: settings beside the defaults, as the service reads them.
 */
export async function routeApp(
  ledger: FakeLedger = new FakeLedger(),
  env: NodeJS.ProcessEnv = {},
): Promise<{ app: FastifyInstance; ledger: FakeLedger }> {
  const config = loadConfig({ AUTH_DEV_SECRET: ROUTE_TEST_SECRET, LOG_LEVEL: 'silent', ...env });
  const app = await buildApp({ config, logger: createLogger('silent'), ledger, metrics: new LedgerMetrics() });
  return { app, ledger };
}

export type Caller = { tenantId: string; orgId: string; userId: string; headers: Record<string, string> };

/** A user of a fresh tenant and org (unless `given` names them) with a development token for them, as the API's standard headers. */
export async function newCaller(given: Partial<Pick<Caller, 'tenantId' | 'orgId'>> = {}): Promise<Caller> {
  const [tenantId, orgId, userId] = [given.tenantId ?? randomUUID(), given.orgId ?? randomUUID(), randomUUID()];
  const token = await devToken({ secret: ROUTE_TEST_SECRET, tenantId, orgId, userId });
  return { tenantId, orgId, userId, headers: { authorization: `Bearer ${token}`, 'x-tenant-id': tenantId, 'x-org-id': orgId } };
}
