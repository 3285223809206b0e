import { aggregates } from '../commands/index.ts';
import { bulkWorker } from '../consumers/bulk/bulk-worker.ts';
import { eventRoutes } from '../consumers/index.ts';
import { integrationWorkers } from '../consumers/integrations/index.ts';
import { buildApp } from '../http/app.ts';
import { loadConfig } from '../ledger/config.ts';
import { createLogger } from '../ledger/logger.ts';
import { projections } from '../projections/index.ts';

/** Serves the API with the command processors and projections in this one process. */
export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadConfig(env);
  const logger = createLogger(config.LOG_LEVEL);
  const app = await buildApp(config, logger, {
    aggregates,
    routes: eventRoutes,
    projections,
    workers: [...integrationWorkers(config), bulkWorker({ sliceItems: 500, slicesInFlight: 4, jobsAtOnce: 4 })],
  });
  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await app.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  await app.listen({ port: config.PORT, host: config.HOST });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  serve().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
