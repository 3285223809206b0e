import { loadConfig } from '../config.ts';
import { withDatabase } from '../ledger/database.ts';
import { reasonOf, StartupError } from '../ledger/startup-error.ts';
import { envPort } from '../stack/process-control.ts';
import { ensureStack } from '../stack/stack.ts';
import { serveOrReuseStandIn, type SharedStandIn } from '../stack/unified/shared-stand-in.ts';
import { serve } from './server.ts';
import { DEV_SECRET } from './token.ts';

/**
 * `npm start`: the local stack (started or reused), then the service, in development mode unless a JWKS is configured.
 *
 * Signals: the "start" script execs node, so npm's SIGINT/SIGTERM (npm forwards both to its script) reach this process,
 * not a shell that would die and leave it running. Once the service serves, bin/server.ts's handler drains in-flight
 * requests and exits, which also ends the connection provider's stand-in (an HTTP server in this process) when this
 * process serves it. The stack (Kafka, registry, Postgres) runs detached on purpose and keeps running: `npm run
 * stack:down` stops it.
 */
let standIn: SharedStandIn | undefined;
let draining = false;
let firstSignalAt: number | undefined;
const onSignal = (signal: NodeJS.Signals) => {
  const exitCode = 128 + (signal === 'SIGINT' ? 2 : 15);
  // bin/server.ts's own (once) listener, when there is one, runs after this one and drains.
  draining ||= process.listenerCount(signal) > 1;
  // Before the service serves, nothing is in flight: stop now (a signal would otherwise be swallowed by this listener).
  if (!draining) {
    void (standIn?.close() ?? Promise.resolve()).finally(() => process.exit(exitCode));
    return;
  }
  // bin/server.ts's shutdown is draining. A Ctrl-C reaches this process twice (from the terminal and forwarded by npm):
  // this listener keeps that repeat from killing it mid-drain; a signal sent again a second later forces the exit.
  const now = Date.now();
  if (firstSignalAt === undefined) firstSignalAt = now;
  else if (now - firstSignalAt > 1_000) {
    console.error(`[service] ${signal} again: exiting without waiting for in-flight requests`);
    process.exit(exitCode);
  }
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

/** As bin/server.ts: a bad setting or an unreachable dependency is one line; anything else keeps its stack. */
const failStart = async (error: unknown): Promise<never> => {
  console.error(error instanceof StartupError ? `cannot start: ${error.message}` : error);
  await standIn?.close().catch(() => undefined);
  process.exit(1);
};

/** What the local stack and the stand-in fail with is the operator's to act on (a port taken, Java missing): one line. */
const startStep = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
  try {
    return await run();
  } catch (error) {
    return failStart(error instanceof StartupError ? error : new StartupError(`${what}: ${reasonOf(error)}`, { cause: error }));
  }
};

// The settings given are checked before the stack is looked at (which reads DATABASE_URL too); unset ones get defaults.
try {
  loadConfig({ AUTH_DEV_SECRET: DEV_SECRET, ...process.env });
} catch (error) {
  await failStart(error);
}
const stack = await startStep('the local stack', () => ensureStack({ log: (message) => console.log(`[stack] ${message}`) }));
const env: NodeJS.ProcessEnv = {
  KAFKA_BROKERS: stack.kafkaBrokers.join(','),
  SCHEMA_REGISTRY_URL: stack.schemaRegistryUrl,
  DATABASE_URL: withDatabase(stack.postgresServerUrl, 'commerce_ledger'),
  ...process.env,
};
// Without a connection provider configured, development talks to the stand-in (in memory; lost when the process serving
// it stops). A second `npm start` on the machine finds the first one's on the port and shares it.
if (!env.UNIFIED_API_URL) {
  standIn = await startStep("the connection provider's stand-in (UNIFIED_API_URL is unset)", () =>
    serveOrReuseStandIn({
      port: envPort('UNIFIED_STAND_IN_PORT', 18090),
      token: env.UNIFIED_API_TOKEN || undefined,
      workspaceSecret: env.UNIFIED_WORKSPACE_SECRET || undefined,
    }),
  );
  env.UNIFIED_API_URL = standIn.url;
  env.UNIFIED_WORKSPACE_SECRET ??= standIn.workspaceSecret;
  console.log(
    standIn.owned
      ? `[integrations] UNIFIED_API_URL unset: the connection provider's stand-in serves ${standIn.url}`
      : `[integrations] UNIFIED_API_URL unset: using the connection provider's stand-in another instance serves on ${standIn.url} (it stops with that instance)`,
  );
}
if (!env.AUTH_JWKS_URL && !env.AUTH_DEV_SECRET) {
  env.AUTH_DEV_SECRET = DEV_SECRET;
  console.log('[auth] development mode: HS256 tokens from `npm run token -- --tenant <uuid> --org <uuid>` are accepted');
}
try {
  await serve(env);
} catch (error) {
  await failStart(error);
}
console.log(`[service] listening on http://${env.HOST ?? '127.0.0.1'}:${env.PORT ?? 3000} (OpenAPI UI at /docs)`);
