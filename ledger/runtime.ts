import type { Knex } from 'knex';
import { topicsOf, type SomeAggregate } from './aggregate.ts';
import type { CommandBus } from './command-bus.ts';
import type { LedgerConfig } from './config.ts';
import { instanceId, kafkaBrokers } from './config-derived.ts';
import { ReplyHandover } from './reply-handover.ts';
import { dependencyMonitor, UnavailableError, type DependencyMonitor } from './dependencies.ts';
import { createKnex, createPool, ensureDatabase } from './database.ts';
import { EventCodec } from './event-codec.ts';
import type { EventRoute } from './event-router.ts';
import { createKafka, ensureTopics, type Kafka } from './kafka.ts';
import type { Logger } from './logger.ts';
import type { LedgerMetrics } from './metrics.ts';
import type { Projection } from './projection.ts';
import type { ProjectionWaiter } from './projection-waiter.ts';
import { readinessOf, type Readiness } from './readiness.ts';
import { exposeRuntimeMetrics } from './runtime-metrics.ts';
import {
  processorPartNames,
  RunningParts,
  startCommandBus,
  startProcessors,
  startProjections,
  startWaiter,
  startWorkers,
  type RuntimeContext,
} from './runtime-parts.ts';
import { namespaced, type TopicSpec } from './topics.ts';
import { replicationFor, replicationProblem, replicationShortfalls } from './topic-replication.ts';
import { boundHeapGrowth } from './heap-growth.ts';
import { reasonOf, redactUrl, StartupError } from './startup-error.ts';

export type { Worker, WorkerDeps } from './worker-part.ts';
import type { Worker } from './worker-part.ts';

/** What the ledger runs, composed by the caller: the aggregates' single writers, the stream processors and the read models. */
export type LedgerModules = {
  aggregates: readonly SomeAggregate[];
  routes: readonly EventRoute[];
  projections: readonly Projection[];
  workers?: readonly Worker[];
  /**
   * A module exporting `aggregates` and `routes` (the same as these): their processors and routers then run in a
   * worker thread (ledger/processor-thread.ts), on a core of their own, rather than on the edge's event loop.
   */
  processorsThread?: URL;
  /** Where the runtime records its metrics (the command bus, projection lag, restarts); GET /metrics serves its registry. */
  metrics?: LedgerMetrics;
};

export type Runtime = {
  kafka: Kafka;
  codec: EventCodec;
  db: Knex;
  bus: CommandBus;
  waiter: ProjectionWaiter;
  dependencies: DependencyMonitor;
  readiness: () => Readiness;
  stop: () => Promise<void>;
};

/**
 * Wires the ledger: topics and schemas, then, as SERVICE_ROLES names them, the command processors and event routers,
 * the live projections, the edge's bus and the workers; readiness reads them all. A failed start stops what it started.
 */
export async function startRuntime(
  config: LedgerConfig,
  logger: Logger,
  { aggregates, routes, projections, workers = [], processorsThread, metrics }: LedgerModules,
): Promise<Runtime> {
  // Before the processor thread starts: V8's flags are the process's.
  boundHeapGrowth(config.HEAP_GROWTH_PERCENT);
  const allTopics = topicsOf(aggregates);
  await createTopics(config, logger, allTopics);
  const codec = await registerSchemas(config, allTopics);
  await ensureDatabase(config.DATABASE_URL);
  const kafka = createKafka(kafkaBrokers(config), 'commerce-ledger', logger, instanceId(config));
  const db = createKnex(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL);
  const dependencies = dependencyMonitor(
    { brokers: kafkaBrokers(config), registryUrl: config.SCHEMA_REGISTRY_URL, databaseUrl: config.DATABASE_URL },
    logger,
  );
  const context: RuntimeContext = { config, logger, kafka, codec, db, pool, dependencies, metrics, replies: new ReplyHandover() };
  const parts = new RunningParts(logger);
  parts.onStop(() => dependencies.stop());
  try {
    await dependencies.start();
    const roles = config.SERVICE_ROLES;
    // An instance without the processors role leaves deciding to another instance of the namespace.
    if (roles.has('processors')) await startProcessors(context, parts, { aggregates, routes, thread: processorsThread });
    if (roles.has('projections')) await startProjections(context, parts, projections);
    const waiter = await startWaiter(context, parts, projections);
    const bus = await startCommandBus(context, parts);
    if (roles.has('streams')) await startWorkers(context, parts, { workers, bus, waiter });
    // A request waiting on a dependency that just went away would only time out: answer it now. The read models are fed
    // from Kafka as well as kept in Postgres, so a write waiting to be shown there waits on either.
    dependencies.onChange((name, up) => {
      if (up) return;
      if (name === 'kafka') bus.failAll(new UnavailableError('kafka'));
      if (name === 'kafka' || name === 'postgres') waiter.failAll(new UnavailableError(name));
    });
    if (metrics) exposeRuntimeMetrics(context, metrics, parts, processorPartNames(aggregates, routes));

    const readiness = () =>
      readinessOf({
        dependencies,
        supervisors: parts.statuses,
        listening: () => waiter.listening(),
        lags: parts.runners.map(({ name, runner }) => ({ projection: name, lagBehind: () => runner.lagBehind(name) })),
      });
    const stop = async () => {
      await parts.stopAll();
      await Promise.all([db.destroy(), pool.end()]);
    };
    return { kafka, codec, db, bus, waiter, dependencies, readiness, stop };
  } catch (error) {
    await parts.stopAll({ quietly: true });
    await Promise.all([db.destroy(), pool.end()]);
    throw error;
  }
}

/**
 * Every topic of the aggregates, created when missing. Start-up failures of a dependency are StartupErrors: one line
 * naming the setting and what was tried. The admin's retries log nothing: their lines would only repeat that one.
 */
async function createTopics(config: LedgerConfig, logger: Logger, topics: TopicSpec[]): Promise<void> {
  const admin = createKafka(kafkaBrokers(config), 'commerce-ledger', logger.child({}, { level: 'silent' })).admin();
  const brokers = `${config.KAFKA_BROKERS} (KAFKA_BROKERS)`;
  try {
    await admin.connect();
  } catch (error) {
    await admin.disconnect().catch(() => undefined);
    throw new StartupError(`cannot reach Kafka at ${brokers}: ${reasonOf(error)}`, { cause: error });
  }
  try {
    const { brokers: nodes } = await admin.describeCluster();
    const replication = replicationFor(nodes.length, {
      factor: config.TOPIC_REPLICATION_FACTOR,
      minInsync: config.TOPIC_MIN_INSYNC_REPLICAS,
    });
    const problem = replicationProblem(replication, nodes.length);
    if (problem) throw new StartupError(`${problem} (TOPIC_REPLICATION_FACTOR, TOPIC_MIN_INSYNC_REPLICAS; Kafka at ${brokers})`);
    try {
      await ensureTopics(admin, config.LEDGER_NAMESPACE, topics, config.TOPIC_PARTITIONS, config.RECORD_LIMIT_BYTES, replication);
    } catch (error) {
      throw new StartupError(`cannot create the topics on Kafka at ${brokers}: ${reasonOf(error)}`, { cause: error });
    }
    const names = topics.map((topic) => namespaced(config.LEDGER_NAMESPACE, topic.name));
    const shortfalls = await replicationShortfalls(admin, names, replication);
    if (shortfalls.length > 0) {
      throw new StartupError(
        `topics on Kafka at ${brokers} are kept below replication factor ${replication.factor}, min.insync.replicas ${replication.minInsync} ` +
          `(TOPIC_REPLICATION_FACTOR, TOPIC_MIN_INSYNC_REPLICAS): ${shortfalls.join('; ')}; raise them (kafka-reassign-partitions, kafka-configs) or lower the settings`,
      );
    }
  } finally {
    await admin.disconnect();
  }
}

/** The event schemas, registered (or found) in the schema registry; the codec then holds their ids. */
async function registerSchemas(config: LedgerConfig, topics: readonly TopicSpec[]): Promise<EventCodec> {
  const codec = EventCodec.connect(config.SCHEMA_REGISTRY_URL, config.LEDGER_NAMESPACE);
  try {
    await codec.registerAll(topics.filter((t) => t.kind === 'events'));
  } catch (error) {
    throw await registryStartupError(config.SCHEMA_REGISTRY_URL, error);
  }
  return codec;
}

/**
 * The registry client reports a refused connection as an HTTP error of its own making (`status 400`): ask the registry
 * directly whether it answers, to tell "cannot reach" from a registration it refused.
 */
async function registryStartupError(registryUrl: string, error: unknown): Promise<StartupError> {
  const where = `${redactUrl(registryUrl)} (SCHEMA_REGISTRY_URL)`;
  const probe = await fetch(`${registryUrl.replace(/\/+$/, '')}/subjects`, { signal: AbortSignal.timeout(5_000) }).then(
    (response) => (response.ok ? undefined : `HTTP ${response.status} from GET /subjects`),
    (failure: unknown) => reasonOf(failure),
  );
  return probe === undefined
    ? new StartupError(`the schema registry at ${where} refused the event schemas: ${reasonOf(error)}`, { cause: error })
    : new StartupError(`cannot reach the schema registry at ${where}: ${probe}`, { cause: error });
}
