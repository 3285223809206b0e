import type { Kafka } from './kafka.ts';
import type { Knex } from 'knex';
import type { CommandBus } from './command-bus.ts';
import type { DependencyMonitor } from './dependencies.ts';
import type { EventCodec } from './event-codec.ts';
import type { Logger } from './logger.ts';
import type { Part, PartSignals } from './supervisor.ts';
import type { LogPosition } from './message.ts';

/** What a worker is given: the read models, the way to send commands, and what it may need to know about dependencies. */
export type WorkerDeps = {
  db: Knex;
  bus: CommandBus;
  logger: Logger;
  dependencies: DependencyMonitor;
  /**
   * Calls `listener` whenever the named live projection applies more of the log (a worker's queue may have grown), with
   * the (namespaced) topic it applied more of.
   */
  onProgress: (projection: string, listener: (topic: string) => void) => () => void;
  /** Resolves once every live projection reading those positions' topics has applied them (a worker's read-your-writes). */
  readModelsAt: (positions: LogPosition[]) => Promise<void>;
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
