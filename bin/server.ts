import type { FastifyInstance } from 'fastify';
import { bulkWorker } from '../consumers/bulk/bulk-worker.ts';
import { exportNotifier } from '../consumers/export/export-notifier.ts';
import { checkoutNotifier } from '../consumers/checkout/checkout-notifier.ts';
import { completionSweeper } from '../consumers/checkout/completion-sweeper.ts';
import { exportWorker } from '../consumers/export/export-worker.ts';
import { DEVELOPMENT_WEBHOOK_SECRET_KEY } from '../commands/integrations/webhook-secret.ts';
import { feedWorker } from '../consumers/feed/feed-worker.ts';
import { integrationWorkers } from '../consumers/integrations/index.ts';
import { buildApp } from '../http/app.ts';
import { exposeDeadLetters } from '../http/plugins/metrics.ts';
import { runtimeLedger } from '../http/runtime-ledger.ts';
import { loadConfig } from '../config.ts';
import { createLogger } from '../ledger/logger.ts';
import { LedgerMetrics } from '../ledger/metrics.ts';
import { startRuntime } from '../ledger/runtime.ts';
import { StartupError } from '../ledger/startup-error.ts';
import { projections } from '../projections/index.ts';
import { createObjectStore } from '../adapters/storage/index.ts';
import { cannotListen, checkListenAddress } from './listen-address.ts';
import { aggregates, routes } from './processor-modules.ts';

/**
 * Starts the ledger (topics, schemas, processors, projections, workers; only the parts SERVICE_ROLES names), then
 * serves the HTTP app over it in this one process.
 */
export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadConfig(env);
  const logger = createLogger(config.LOG_LEVEL);
  await checkListenAddress(config.HOST, config.PORT);
  if (config.FEED_KEEP_REPLACED_SECONDS < config.FEED_LINK_SECONDS) {
    logger.warn(
      { FEED_KEEP_REPLACED_SECONDS: config.FEED_KEEP_REPLACED_SECONDS, FEED_LINK_SECONDS: config.FEED_LINK_SECONDS },
      'replaced catalog feed files are deleted before the links handed out for them expire; such a link may answer 404',
    );
  }
  const metrics = new LedgerMetrics();
  const runtime = await startRuntime(config, logger, {
    aggregates,
    routes,
    projections,
    workers: [
      ...integrationWorkers(config),
      bulkWorker({
        sliceItems: config.BULK_SLICE_ITEMS,
        slicesInFlight: config.BULK_SLICES_IN_FLIGHT,
        jobsAtOnce: config.BULK_JOBS_AT_ONCE,
      }),
      exportWorker({
        store: () => createObjectStore(config, logger),
        exportsAtOnce: config.EXPORTS_AT_ONCE,
        giveUpAfterMs: config.EXPORT_GIVE_UP_AFTER_MS,
      }),
      exportNotifier({
        store: () => createObjectStore(config, logger),
        webhookSecretKey: config.WEBHOOK_SECRET_KEY ?? DEVELOPMENT_WEBHOOK_SECRET_KEY,
        smtpUrl: config.SMTP_URL,
        allowPrivateNetworks: config.NOTICE_ALLOW_PRIVATE_NETWORKS,
        from: config.NOTICE_FROM,
        linkSeconds: config.NOTICE_LINK_SECONDS,
        noticesAtOnce: config.NOTICES_AT_ONCE,
      }),
      checkoutNotifier({
        webhookSecretKey: config.WEBHOOK_SECRET_KEY ?? DEVELOPMENT_WEBHOOK_SECRET_KEY,
        publicBaseUrl: config.PUBLIC_BASE_URL,
        allowPrivateNetworks: config.NOTICE_ALLOW_PRIVATE_NETWORKS,
        noticesAtOnce: config.NOTICES_AT_ONCE,
      }),
      completionSweeper({ afterMs: config.CHECKOUT_COMPLETION_TIMEOUT_SECONDS * 1_000, atOnce: 4 }),
      feedWorker({
        store: () => createObjectStore(config, logger),
        quietMs: config.FEED_QUIET_MS,
        maxDelayMs: config.FEED_MAX_DELAY_MS,
        buildsAtOnce: config.FEED_BUILDS_AT_ONCE,
        restFactor: config.FEED_REST_FACTOR,
        pageSize: config.FEED_PAGE_SIZE,
        readModelTimeoutMs: config.FEED_READ_MODEL_TIMEOUT_MS,
        keepReplacedMs: config.FEED_KEEP_REPLACED_SECONDS * 1_000,
      }),
    ],
    metrics,
    ...(config.PROCESSORS_IN_THREAD ? { processorsThread: new URL('./processor-modules.ts', import.meta.url) } : {}),
  });
  const ledger = runtimeLedger(runtime, config);
  exposeDeadLetters(metrics, runtime.db, projections, () => ledger.require('postgres'));
  let app: FastifyInstance;
  try {
    app = await buildApp({ config, logger, ledger, metrics });
  } catch (error) {
    await runtime.stop();
    throw error;
  }
  // In this order: stop taking requests and drain those in flight (they need the ledger), then stop the ledger.
  const close = async () => {
    await app.close();
    await runtime.stop();
  };
  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  try {
    await app.listen({ port: config.PORT, host: config.HOST });
  } catch (error) {
    // Taken since the check above: leave the consumer groups before exiting, so the other instances need not wait out a session.
    await close();
    throw cannotListen(config.HOST, config.PORT, error);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  serve().catch((error: unknown) => {
    // A bad setting or an unreachable dependency is one line the operator can act on; anything else keeps its stack.
    console.error(error instanceof StartupError ? `cannot start: ${error.message}` : error);
    process.exit(1);
  });
}
