import { randomUUID } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import type pg from 'pg';
import { inject } from 'vitest';
import { brandAggregate } from '../../commands/catalog/brand.ts';
import { createPool, ensureDatabase, withDatabase } from '../../ledger/database.ts';
import { EventCodec } from '../../ledger/event-codec.ts';
import { createKafka, ensureTopics, keyedProducer, quietKafka, type Kafka } from '../../ledger/kafka.ts';
import type { Logger } from '../../ledger/logger.ts';

/**
 * Publishes one BrandCreated per name, all of one brand (one key: one partition, in this order), straight onto an
 * events topic, as a processor would have: for tests of what the projection runner does with them.
 */
export async function publishBrandsCreated(codec: EventCodec, topic: string, names: string[], correlationId: string): Promise<void> {
  const producer = keyedProducer(quietKafka(inject('stack').kafkaBrokers, correlationId));
  await producer.connect();
  const brandId = randomUUID();
  const messages = await Promise.all(
    names.map(async (name, index) => ({
      key: brandId,
      value: await codec.encode(
        topic,
        { type: 'BrandCreated', data: { brandId, name, description: null, logoUrl: null } },
        {
          eventId: randomUUID(),
          eventType: 'BrandCreated',
          aggregateId: brandId,
          tenantId: randomUUID(),
          orgId: randomUUID(),
          actor: { userId: null, email: null, ip: null },
          occurredAt: 1_000 + index,
          correlationId,
          causationId: randomUUID(),
          schemaVersion: 1,
        },
      ),
    })),
  );
  await producer.send({ topic, messages });
  await producer.disconnect();
}

/** Polls `condition` every 100 ms for up to a minute; fails naming `what` if it never holds. */
export async function until(what: string, condition: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`never: ${what}`);
}

/**
 * What a projection runner test needs: the shared projection test database, a Kafka client, and the brand events topic
 * of its own namespace (one partition) with its schemas registered.
 */
export async function brandEventsFixture(
  namespace: string,
  clientId: string,
  logger: Logger,
): Promise<{ db: Knex; pool: pg.Pool; kafka: Kafka; codec: EventCodec }> {
  const stack = inject('stack');
  const url = withDatabase(stack.postgresServerUrl, 'cl_projection_tests');
  await ensureDatabase(url);
  const db = knexFactory({ client: 'pg', connection: url });
  const pool = createPool(url);
  const kafka = createKafka(stack.kafkaBrokers, clientId, logger);
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, namespace, [brandAggregate.events], 1, 1_000_000);
  await admin.disconnect();
  const codec = EventCodec.connect(stack.schemaRegistryUrl, namespace);
  await codec.registerAll([brandAggregate.events]);
  return { db, pool, kafka, codec };
}
