import type { Kafka } from 'kafkajs';
import type { Knex } from 'knex';
import { eventRoutes } from '../consumers/index.ts';
import { projections } from '../projections/index.ts';
import { aggregates } from './aggregates.ts';
import { CommandBus } from './command-bus.ts';
import { CommandProcessor } from './command-processor.ts';
import { kafkaBrokers, type Config } from './config.ts';
import { createKnex, ensureDatabase } from './database.ts';
import { EventCodec } from './event-codec.ts';
import { EventRouter } from './event-router.ts';
import { createKafka, ensureTopics } from './kafka.ts';
import type { Logger } from './logger.ts';
import { liveSchema } from './projection.ts';
import { ProjectionRunner } from './projection-runner.ts';
import { ProjectionWaiter } from './projection-waiter.ts';
import { allTopics } from './topics.ts';

export type Runtime = { kafka: Kafka; codec: EventCodec; db: Knex; bus: CommandBus; waiter: ProjectionWaiter; stop: () => Promise<void> };

/** Wires the ledger: topics and schemas, the command processors, the event routers, the live projections and the edge's bus. */
export async function startRuntime(config: Config, logger: Logger): Promise<Runtime> {
  const namespace = config.LEDGER_NAMESPACE;
  const kafka = createKafka(kafkaBrokers(config), 'commerce-ledger', logger);
  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureTopics(admin, namespace, allTopics, config.TOPIC_PARTITIONS, config.RECORD_LIMIT_BYTES);
  } finally {
    await admin.disconnect();
  }
  const codec = EventCodec.connect(config.SCHEMA_REGISTRY_URL, namespace);
  await codec.registerAll(allTopics.filter((t) => t.kind === 'events'));

  await ensureDatabase(config.DATABASE_URL);
  const db = createKnex(config.DATABASE_URL);
  const stops: (() => Promise<void>)[] = [];
  try {
    // Parts of one kind are independent consumer groups: start them side by side.
    const startAll = (parts: { start: () => Promise<void>; stop: () => Promise<void> }[]) =>
      Promise.all(
        parts.map(async (part) => {
          await part.start();
          stops.push(() => part.stop());
        }),
      );
    const maxRecordBytes = config.RECORD_LIMIT_BYTES;
    await startAll(aggregates.map((definition) => new CommandProcessor({ kafka, codec, namespace, logger, maxRecordBytes }, definition)));
    await startAll(eventRoutes.map((route) => new EventRouter({ kafka, codec, namespace, logger, maxRecordBytes }, route)));
    await startAll(
      projections.map((projection) => new ProjectionRunner({ kafka, codec, db, namespace, logger }, projection, { schema: liveSchema(projection), notify: true })),
    );
    const waiter = new ProjectionWaiter(config.DATABASE_URL, db, projections, namespace, logger);
    await waiter.start();
    stops.push(() => waiter.stop());
    const bus = new CommandBus(kafka, namespace, config.COMMAND_TIMEOUT_MS, maxRecordBytes, logger);
    await bus.start();
    stops.push(() => bus.stop());
    const stop = async () => {
      for (const stopOne of stops.reverse()) await stopOne().catch((err: unknown) => logger.warn({ err }, 'stop failed'));
      await db.destroy();
    };
    return { kafka, codec, db, bus, waiter, stop };
  } catch (error) {
    for (const stopOne of stops.reverse()) await stopOne().catch(() => undefined);
    await db.destroy();
    throw error;
  }
}
