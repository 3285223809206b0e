import { parentPort, workerData } from 'node:worker_threads';
import { Registry } from 'prom-client';
import type { SomeAggregate } from './aggregate.ts';
import type { CommandReply } from './command-reply.ts';
import type { LedgerConfig } from './config.ts';
import { instanceId, kafkaBrokers } from './config-derived.ts';
import { EventCodec } from './event-codec.ts';
import type { EventRoute } from './event-router.ts';
import { createKafka } from './kafka.ts';
import { createLogger } from './logger.ts';
import { ProcessorMetrics } from './processor-metrics.ts';
import { startProcessorParts } from './processor-parts.ts';
import { StateStore, stateStorePath } from './snapshot-store.ts';
import type { Supervisor } from './supervisor.ts';
import type { FromThread, ToThread } from './thread-part.ts';

/**
 * A worker thread running the command processors and event routers (ledger/thread-part.ts): its own event loop, Kafka
 * clients and codec, so deciding and committing use a core of their own. `modules` names the composition root's module
 * exporting `aggregates` and `routes` (the runtime knows no domain module).
 */
type ThreadData = { config: LedgerConfig; modules: string; schemaIds: [string, number][]; replyAddress: string };

const { config, modules, schemaIds, replyAddress } = workerData as ThreadData;
const port = parentPort;
if (!port) throw new Error('processor-thread runs as a worker thread');
const post = (message: FromThread) => port.postMessage(message);

const logger = createLogger(config.LOG_LEVEL).child({ thread: 'processors' });
const composed = (await import(modules)) as { aggregates: readonly SomeAggregate[]; routes: readonly EventRoute[] };
// The thread's own registry (this module scope is not the main thread's): read when the main thread asks at scrape time.
const metricsRegistry = new Registry();
let supervisors: Supervisor[] = [];
let stateStore: StateStore | undefined;
let statusTimer: NodeJS.Timeout | undefined;

try {
  const namespace = config.LEDGER_NAMESPACE;
  const kafka = createKafka(kafkaBrokers(config), 'commerce-ledger', logger, instanceId(config));
  // The main thread registered every schema before starting this one: its ids come along, so (as on the main loop) the
  // registry is off the write path, a restart of this thread included.
  const codec = EventCodec.connect(config.SCHEMA_REGISTRY_URL, namespace, schemaIds);
  const metrics = new ProcessorMetrics(metricsRegistry);
  stateStore = config.STATE_STORE === 'lmdb' ? new StateStore(stateStorePath(config), config.STATE_CACHE_SIZE) : undefined;
  // The replies the main thread's bus awaits go to it by message, once their round has committed.
  const localReplies = { address: replyAddress, deliver: (replies: CommandReply[]) => post({ type: 'replies', replies }) };
  const deps = { kafka, codec, namespace, logger, maxRecordBytes: config.RECORD_LIMIT_BYTES, metrics, stateStore, localReplies };
  supervisors = await startProcessorParts(deps, composed.aggregates, composed.routes);
  const report = () => post({ type: 'status', statuses: supervisors.map((s) => s.status()) });
  report();
  statusTimer = setInterval(report, 250);
  post({ type: 'started' });
} catch (error) {
  post({ type: 'start-failed', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}

port.on('message', (message: ToThread) => {
  if (message.type === 'metrics') {
    void metricsRegistry
      .metrics()
      .catch((err: unknown) => {
        logger.warn({ err }, 'could not read the processor metrics');
        return '';
      })
      .then((text) => post({ type: 'metrics', id: message.id, text }));
    return;
  }
  clearInterval(statusTimer);
  void Promise.all(supervisors.map((s) => s.stop().catch((err: unknown) => logger.warn({ err }, 'stop failed'))))
    .then(() => stateStore?.close())
    .catch((err: unknown) => logger.warn({ err }, 'could not close the state store'))
    .then(() => {
      post({ type: 'stopped' });
      process.exit(0);
    });
});
