import type { Kafka } from 'kafkajs';
import type { Knex } from 'knex';
import { leadersOf, topicsOf, type SomeAggregate } from './aggregate.ts';
import { CommandBus } from './command-bus.ts';
import { kafkaBrokers, type LedgerConfig } from './config.ts';
import { ConsumerLagReader } from './consumer-lag.ts';
import { dependencyMonitor, UnavailableError, type DependencyMonitor } from './dependencies.ts';
import { createKnex, ensureDatabase } from './database.ts';
import { EventCodec } from './event-codec.ts';
import type { EventRoute } from './event-router.ts';
import { createKafka, ensureTopics } from './kafka.ts';
import type { Logger } from './logger.ts';
import type { LedgerMetrics } from './metrics.ts';
import { liveSchema, type Projection } from './projection.ts';
import { groupName, projectionGroups, ProjectionRunner } from './projection-runner.ts';
import { ProjectionWaiter } from './projection-waiter.ts';
import { ProcessorMetrics } from './processor-metrics.ts';
import { readinessOf, type Readiness } from './readiness.ts';
import { startProcessorParts, startSupervised } from './processor-parts.ts';
import { Supervisor, type Part, type PartSignals } from './supervisor.ts';
import { namespaced } from './topics.ts';
import { ProcessorThread } from './thread-part.ts';
import { reasonOf, redactUrl, StartupError } from './startup-error.ts';

/** What a worker is given: the read models, the way to send commands, and what it may need to know about dependencies. */
export type WorkerDeps = {
  db: Knex;
  bus: CommandBus;
  logger: Logger;
  dependencies: DependencyMonitor;
  /** Calls `listener` whenever the named live projection applies more of the log (a worker's queue may have grown). */
  onProgress: (projection: string, listener: () => void) => () => void;
  /** For a worker that consumes a topic itself (its own consumer group, under the namespace). */
  kafka: Kafka;
  codec: EventCodec;
  namespace: string;
};

/**
 * A stream processor whose work is a side effect outside the ledger (a call to a platform): it reads its queue from a
 * read model and reports every outcome as a command, so what it did is in the log like everything else.
 */
export type Worker = { name: string; create: (deps: WorkerDeps, signals: PartSignals) => Part };

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

/** Wires the ledger: topics and schemas, the command processors, the event routers, the live projections and the edge's bus. */
export async function startRuntime(
  config: LedgerConfig,
  logger: Logger,
  { aggregates, routes, projections, workers = [], processorsThread, metrics }: LedgerModules,
): Promise<Runtime> {
  const namespace = config.LEDGER_NAMESPACE;
  const allTopics = topicsOf(aggregates);
  const kafka = createKafka(kafkaBrokers(config), 'commerce-ledger', logger);
  // Start-up failures of a dependency are StartupErrors: one line naming the setting and what was tried. The admin's
  // retries log nothing: their lines would only repeat the one a failure here ends with.
  const admin = createKafka(kafkaBrokers(config), 'commerce-ledger', logger.child({}, { level: 'silent' })).admin();
  const brokers = `${config.KAFKA_BROKERS} (KAFKA_BROKERS)`;
  try {
    await admin.connect();
  } catch (error) {
    await admin.disconnect().catch(() => undefined);
    throw new StartupError(`cannot reach Kafka at ${brokers}: ${reasonOf(error)}`, { cause: error });
  }
  try {
    await ensureTopics(admin, namespace, allTopics, config.TOPIC_PARTITIONS, config.RECORD_LIMIT_BYTES);
  } catch (error) {
    throw new StartupError(`cannot create the topics on Kafka at ${brokers}: ${reasonOf(error)}`, { cause: error });
  } finally {
    await admin.disconnect();
  }
  const codec = EventCodec.connect(config.SCHEMA_REGISTRY_URL, namespace);
  try {
    await codec.registerAll(allTopics.filter((t) => t.kind === 'events'));
  } catch (error) {
    throw await registryStartupError(config.SCHEMA_REGISTRY_URL, error);
  }

  await ensureDatabase(config.DATABASE_URL);
  const db = createKnex(config.DATABASE_URL);
  const dependencies = dependencyMonitor(
    { brokers: kafkaBrokers(config), registryUrl: config.SCHEMA_REGISTRY_URL, databaseUrl: config.DATABASE_URL },
    logger,
  );
  const stops: (() => Promise<void>)[] = [() => dependencies.stop()];
  // What readiness reads: every part's supervisor, and the relayed statuses of the parts in the processor thread.
  const statuses: Pick<Supervisor, 'status'>[] = [];
  const runners: { name: string; runner: ProjectionRunner }[] = [];
  try {
    await dependencies.start();
    // Each part restarts by itself when it fails; parts of one kind are independent consumer groups, started side by side.
    const startAll = async (parts: { name: string; create: (signals: Supervisor) => Part }[]) => {
      const started = await startSupervised({ logger }, parts);
      statuses.push(...started);
      // …and stopped side by side: a consumer's leave-group round trips add up when taken one after another.
      stops.push(() => stopTogether(started, logger));
    };
    const maxRecordBytes = config.RECORD_LIMIT_BYTES;
    const roles = config.SERVICE_ROLES;
    // An instance without the processors role leaves deciding to another instance of the namespace.
    if (roles.has('processors')) {
      if (processorsThread) {
        const supervisor = new Supervisor('processor-thread', logger);
        const thread = new ProcessorThread(config, processorsThread, codec.schemaIds(), logger, supervisor);
        await supervisor.start(thread);
        const inside = [...leadersOf(aggregates).map((a) => `${a.name}-processor`), ...routes.map((r) => `${r.name}-router`)];
        statuses.push(supervisor, ...thread.readers(inside));
        stops.push(() => supervisor.stop());
        // The thread measures its rounds in a registry of its own: its text follows this registry's at every scrape.
        metrics?.addExposition(() => thread.metricsText());
      } else {
        const measured = metrics ? { metrics: new ProcessorMetrics(metrics.registry) } : {};
        const parts = await startProcessorParts({ kafka, codec, namespace, logger, maxRecordBytes, ...measured }, aggregates, routes);
        statuses.push(...parts);
        stops.push(() => stopTogether(parts, logger));
      }
    }
    // Projections that name one runner, or read the same topics, share a consumer and a transaction (today catalog,
    // audit and validation, which a product write waits for): one fetch and one decode of each event, one commit.
    await startAll(
      (roles.has('projections') ? projectionGroups(projections) : []).map((group) => ({
        name: `projection-${groupName(group)}`,
        create: (signals) => {
          const runner = new ProjectionRunner(
            { kafka, codec, db, namespace, logger },
            group,
            { schema: liveSchema(group[0]!), notify: true },
            signals,
          );
          for (const projection of group) runners.push({ name: projection.name, runner });
          return runner;
        },
      })),
    );
    const waiter = new ProjectionWaiter(config.DATABASE_URL, db, projections, namespace, logger);
    await waiter.start();
    stops.push(() => waiter.stop());
    const edge = new Supervisor('edge-replies', logger);
    const bus = new CommandBus(kafka, namespace, config.COMMAND_TIMEOUT_MS, maxRecordBytes, logger, edge, metrics);
    await edge.start(bus);
    statuses.push(edge);
    stops.push(async () => {
      await edge.stop();
      await bus.close();
    });
    await startAll(
      (roles.has('streams') ? workers : []).map((worker) => ({
        name: `${worker.name}-worker`,
        create: (signals) =>
          worker.create(
            {
              db,
              bus,
              logger,
              dependencies,
              kafka,
              codec,
              namespace,
              onProgress: (projection, listener) => waiter.onProgress(projection, listener),
            },
            signals,
          ),
      })),
    );
    // A request waiting on a dependency that just went away would only time out: answer it now.
    dependencies.onChange((name, up) => {
      if (up) return;
      if (name === 'kafka') bus.failAll(new UnavailableError('kafka'));
      if (name === 'postgres') waiter.failAll(new UnavailableError('postgres'));
    });

    if (metrics) {
      exposeRuntimeGauges(metrics, runners, statuses);
      // Its own client, silent: a broker outage is already logged by every part, and a scrape then serves the last lags.
      const lagKafka = createKafka(kafkaBrokers(config), 'commerce-ledger', logger.child({}, { level: 'silent' }));
      const known = [...leadersOf(aggregates).map((a) => `${a.name}-processor`), ...routes.map((r) => `${r.name}-router`)];
      const lags = new ConsumerLagReader(
        lagKafka,
        namespaced(namespace, 'commerce-ledger.'),
        new Set(known.map((part) => namespaced(namespace, `commerce-ledger.${part}`))),
      );
      stops.push(() => lags.stop());
      exposeConsumerLag(metrics, lags);
    }

    const readiness = () =>
      readinessOf({
        dependencies,
        supervisors: statuses,
        listening: () => waiter.listening(),
        lags: runners.map(({ name, runner }) => ({ projection: name, lagBehind: () => runner.lagBehind(name) })),
      });

    const stop = async () => {
      for (const stopOne of stops.reverse()) await stopOne().catch((err: unknown) => logger.warn({ err }, 'stop failed'));
      await db.destroy();
    };
    return { kafka, codec, db, bus, waiter, dependencies, readiness, stop };
  } catch (error) {
    for (const stopOne of stops.reverse()) await stopOne().catch(() => undefined);
    await db.destroy();
    throw error;
  }
}

/** Gauges read at scrape time from what readiness reads too: each projection's lag and each supervised part's restarts. */
function exposeRuntimeGauges(
  metrics: LedgerMetrics,
  runners: readonly { name: string; runner: ProjectionRunner }[],
  statuses: readonly Pick<Supervisor, 'status'>[],
): void {
  // A restarted projection part creates a new runner: the latest of each name is the one running.
  const lags = () => [...new Map(runners.map(({ name, runner }) => [name, runner.lagBehind(name)])).entries()];
  metrics.gauge(
    'ledger_projection_lag_events',
    'Events a live projection has yet to apply: the log end minus its checkpoint, summed over its partitions',
    ['projection'],
    () => lags().map(([projection, value]) => ({ labels: { projection }, value })),
  );
  metrics.gauge('ledger_projections_lag_events', 'Events all live projections together have yet to apply', [], () => [
    { labels: {}, value: lags().reduce((sum, [, value]) => sum + value, 0) },
  ]);
  metrics.gauge(
    'ledger_part_restarts',
    'Restarts of each supervised part since the service started (processor-thread parts as relayed from the thread)',
    ['part'],
    () => statuses.map((supervisor) => supervisor.status()).map(({ name, restarts }) => ({ labels: { part: name }, value: restarts })),
  );
}

/**
 * `ledger_consumer_lag{group,topic,partition}` and `ledger_consumer_lag_age_seconds`, read from the brokers when scraped
 * (both gauges share one reading): the last values stand, and their age grows, while the brokers do not answer.
 */
function exposeConsumerLag(metrics: LedgerMetrics, lags: ConsumerLagReader): void {
  metrics.gauge(
    'ledger_consumer_lag',
    "Records of a partition a consumer group of the service has yet to commit: the log end minus the group's committed offset",
    ['group', 'topic', 'partition'],
    async () =>
      ((await lags.read())?.samples ?? []).map(({ group, topic, partition, lag }) => ({
        labels: { group, topic, partition: String(partition) },
        value: lag,
      })),
  );
  metrics.gauge('ledger_consumer_lag_age_seconds', 'Seconds since ledger_consumer_lag was read from the brokers', [], async () => {
    const read = await lags.read();
    return read ? [{ labels: {}, value: read.ageSeconds }] : [];
  });
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

/** Stops independent parts at once; one that fails to stop is logged and does not keep the others running. */
async function stopTogether(parts: readonly { stop: () => Promise<void> }[], logger: Logger): Promise<void> {
  await Promise.all(parts.map((part) => part.stop().catch((err: unknown) => logger.warn({ err }, 'stop failed'))));
}
