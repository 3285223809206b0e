import type { Kafka } from './kafka.ts';
import type { Knex } from 'knex';
import type pg from 'pg';
import { leadersOf, type SomeAggregate } from './aggregate.ts';
import { CommandBus } from './command-bus.ts';
import type { LedgerConfig } from './config.ts';
import type { DependencyMonitor } from './dependencies.ts';
import type { EventCodec } from './event-codec.ts';
import type { EventRoute } from './event-router.ts';
import type { Logger } from './logger.ts';
import type { LedgerMetrics } from './metrics.ts';
import { startProcessorParts, startSupervised } from './processor-parts.ts';
import { ProcessorMetrics } from './processor-metrics.ts';
import { liveSchema, type Projection } from './projection.ts';
import { groupName, projectionGroups, ProjectionRunner } from './projection-runner.ts';
import { ProjectionWaiter } from './projection-waiter.ts';
import type { ReplyHandover } from './reply-handover.ts';
import type { Worker } from './worker-part.ts';
import { Supervisor, type Part } from './supervisor.ts';
import { ProcessorThread } from './thread-part.ts';

/** What every step of the start is given: the clients it shares with the others. */
export type RuntimeContext = {
  config: LedgerConfig;
  logger: Logger;
  kafka: Kafka;
  codec: EventCodec;
  db: Knex;
  /** The projection runners' connections (their transactions span several statements of their own). */
  pool: pg.Pool;
  dependencies: DependencyMonitor;
  metrics?: LedgerMetrics;
  /** Where this process's processors hand over the replies its bus awaits. */
  replies: ReplyHandover;
};

/** A live projection and the runner applying it (a group's projections share one), for readiness and the lag gauges. */
export type RunnerOf = { name: string; runner: ProjectionRunner };

/**
 * What the start has started, for readiness (every part's supervisor, and the relayed statuses of the parts in the
 * processor thread) and for stopping it all, last started first.
 */
export class RunningParts {
  readonly statuses: Pick<Supervisor, 'status'>[] = [];
  readonly runners: RunnerOf[] = [];
  private readonly stops: (() => Promise<void>)[] = [];

  private readonly logger: Logger;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  onStop(stop: () => Promise<void>): void {
    this.stops.push(stop);
  }

  /** Parts of one kind, each an independent consumer group restarted by itself when it fails, started side by side… */
  async startSupervised(parts: { name: string; create: (signals: Supervisor) => Part }[]): Promise<void> {
    const started = await startSupervised({ logger: this.logger }, parts);
    this.statuses.push(...started);
    // …and stopped side by side: a consumer's leave-group round trips add up when taken one after another.
    this.onStop(() => stopTogether(started, this.logger));
  }

  /** `quietly`: after a failed start, whose error is the one to report. */
  async stopAll({ quietly = false } = {}): Promise<void> {
    for (const stop of this.stops.reverse()) {
      await stop().catch((err: unknown) => {
        if (!quietly) this.logger.warn({ err }, 'stop failed');
      });
    }
  }
}

/** The parts the processor thread runs, named as its supervisors relay them. */
export const processorPartNames = (aggregates: readonly SomeAggregate[], routes: readonly EventRoute[]): string[] => [
  ...leadersOf(aggregates).map((a) => `${a.name}-processor`),
  ...routes.map((r) => `${r.name}-router`),
];

/** The aggregates' single writers and the event routers: in a worker thread of their own, or on this loop. */
export async function startProcessors(
  { config, logger, kafka, codec, metrics, replies }: RuntimeContext,
  parts: RunningParts,
  { aggregates, routes, thread }: { aggregates: readonly SomeAggregate[]; routes: readonly EventRoute[]; thread?: URL },
): Promise<void> {
  if (thread) {
    const supervisor = new Supervisor('processor-thread', logger);
    const processorThread = new ProcessorThread(config, thread, codec.schemaIds(), logger, supervisor, replies);
    await supervisor.start(processorThread);
    parts.statuses.push(supervisor, ...processorThread.readers(processorPartNames(aggregates, routes)));
    parts.onStop(() => supervisor.stop());
    // The thread measures its rounds in a registry of its own: its text follows this registry's at every scrape.
    metrics?.addExposition(() => processorThread.metricsText());
    return;
  }
  const measured = metrics ? { metrics: new ProcessorMetrics(metrics.registry) } : {};
  const deps = {
    kafka,
    codec,
    namespace: config.LEDGER_NAMESPACE,
    logger,
    maxRecordBytes: config.RECORD_LIMIT_BYTES,
    localReplies: replies,
    ...measured,
  };
  const started = await startProcessorParts(deps, aggregates, routes);
  parts.statuses.push(...started);
  parts.onStop(() => stopTogether(started, logger));
}

/**
 * Projections that name one runner, or read the same topics, share a consumer and a transaction (today catalog,
 * audit and validation, which a product write waits for): one fetch and one decode of each event, one commit.
 */
export async function startProjections(
  { config, logger, kafka, codec, db, pool }: RuntimeContext,
  parts: RunningParts,
  projections: readonly Projection[],
): Promise<void> {
  await parts.startSupervised(
    projectionGroups(projections).map((group) => ({
      name: `projection-${groupName(group)}`,
      create: (signals) => {
        const runner = new ProjectionRunner(
          { kafka, codec, db, pool, namespace: config.LEDGER_NAMESPACE, logger },
          group,
          { schema: liveSchema(group[0]!), notify: true },
          signals,
        );
        for (const projection of group) parts.runners.push({ name: projection.name, runner });
        return runner;
      },
    })),
  );
}

/** Read-your-writes: hears every live projection's progress (NOTIFY) and answers who waits for it. */
export async function startWaiter(
  { config, logger, db }: RuntimeContext,
  parts: RunningParts,
  projections: readonly Projection[],
): Promise<ProjectionWaiter> {
  const waiter = new ProjectionWaiter(config.DATABASE_URL, db, projections, config.LEDGER_NAMESPACE, logger);
  await waiter.start();
  parts.onStop(() => waiter.stop());
  return waiter;
}

/** The bus the edge and the workers send commands with, and its consumer of the processors' replies (`edge-replies`). */
export async function startCommandBus(
  { config, logger, kafka, metrics, replies }: RuntimeContext,
  parts: RunningParts,
): Promise<CommandBus> {
  const edge = new Supervisor('edge-replies', logger);
  const { LEDGER_NAMESPACE, COMMAND_TIMEOUT_MS, RECORD_LIMIT_BYTES } = config;
  const bus = new CommandBus(kafka, LEDGER_NAMESPACE, COMMAND_TIMEOUT_MS, RECORD_LIMIT_BYTES, logger, edge, metrics, replies.address);
  replies.receiveWith((handed) => bus.deliver(handed));
  await edge.start(bus);
  parts.statuses.push(edge);
  parts.onStop(async () => {
    await edge.stop();
    await bus.close();
  });
  return bus;
}

/** The stream processors whose work is a side effect outside the ledger, each a supervised part. */
export async function startWorkers(
  context: RuntimeContext,
  parts: RunningParts,
  { workers, bus, waiter }: { workers: readonly Worker[]; bus: CommandBus; waiter: ProjectionWaiter },
): Promise<void> {
  const { config, logger, kafka, codec, db, dependencies } = context;
  await parts.startSupervised(
    workers.map((worker) => ({
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
            namespace: config.LEDGER_NAMESPACE,
            onProgress: (projection, listener) => waiter.onProgress(projection, listener),
            readModelsAt: (positions) => waiter.waitFor(positions, config.COMMAND_TIMEOUT_MS),
          },
          signals,
        ),
    })),
  );
}

/** Stops independent parts at once; one that fails to stop is logged and does not keep the others running. */
async function stopTogether(parts: readonly { stop: () => Promise<void> }[], logger: Logger): Promise<void> {
  await Promise.all(parts.map((part) => part.stop().catch((err: unknown) => logger.warn({ err }, 'stop failed'))));
}
