import { withDatabase } from '../ledger/database.ts';
import { envPort } from '../stack/process-control.ts';
import { ensureStack } from '../stack/stack.ts';
import { startUnifiedStandIn } from '../stack/unified/stand-in.ts';
import { serve } from './server.ts';
import { DEV_SECRET } from './token.ts';

/** `npm start`: the local stack (started or reused), then the service, in development mode unless a JWKS is configured. */
const stack = await ensureStack({ log: (message) => console.log(`[stack] ${message}`) });
const env: NodeJS.ProcessEnv = {
  KAFKA_BROKERS: stack.kafkaBrokers.join(','),
  SCHEMA_REGISTRY_URL: stack.schemaRegistryUrl,
  DATABASE_URL: withDatabase(stack.postgresServerUrl, 'commerce_ledger'),
  ...process.env,
};
// Without a connection provider configured, development talks to the stand-in (in memory; lost when the service stops).
if (!env.UNIFIED_API_URL) {
  const standIn = await startUnifiedStandIn({ port: envPort('UNIFIED_STAND_IN_PORT', 18090), token: env.UNIFIED_API_TOKEN || undefined });
  env.UNIFIED_API_URL = standIn.url;
  console.log(`[integrations] UNIFIED_API_URL unset: the connection provider's stand-in serves ${standIn.url}`);
}
if (!env.AUTH_JWKS_URL && !env.AUTH_DEV_SECRET) {
  env.AUTH_DEV_SECRET = DEV_SECRET;
  console.log('[auth] development mode: HS256 tokens from `npm run token -- --tenant <uuid> --org <uuid>` are accepted');
}
await serve(env);
console.log(`[service] listening on http://${env.HOST ?? '127.0.0.1'}:${env.PORT ?? 3000} (OpenAPI UI at /docs)`);
