import type { Config } from '../../config.ts';
import type { Worker } from '../../ledger/runtime.ts';
import { orderMappingWorker } from './order-mapping-worker.ts';
import { pushWorker } from './push-worker.ts';
import { UnifiedClient } from '../../adapters/provider/unified-client.ts';

/** The integration workers, talking to the connection provider the configuration names. */
export const integrationWorkers = (config: Config): Worker[] => [
  pushWorker({
    provider: () =>
      new UnifiedClient({ baseUrl: config.UNIFIED_API_URL, token: config.UNIFIED_API_TOKEN, timeoutMs: config.UNIFIED_TIMEOUT_MS }),
    hookUrl: new URL('/unified/webhook', config.PUBLIC_BASE_URL).toString(),
    leaseMs: config.PUSH_LEASE_MS,
    perConnection: config.PUSH_PER_CONNECTION,
  }),
  orderMappingWorker(),
];
