import { withDatabase } from '../ledger/database.ts';
import { ensureStack } from '../stack/stack.ts';
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
if (!env.AUTH_JWKS_URL && !env.AUTH_DEV_SECRET) {
  env.AUTH_DEV_SECRET = DEV_SECRET;
  console.log('[auth] development mode: HS256 tokens from `npm run token -- --tenant <uuid> --org <uuid>` are accepted');
}
await serve(env);
console.log(`[service] listening on http://${env.HOST ?? '127.0.0.1'}:${env.PORT ?? 3000} (OpenAPI UI at /docs)`);
