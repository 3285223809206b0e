import { randomUUID } from 'node:crypto';
import type { Kafka } from '../../ledger/kafka.ts';
import type { Knex } from 'knex';
import type pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brandAggregate, type BrandCreated } from '../../commands/catalog/brand.ts';
import type { EventCodec } from '../../ledger/event-codec.ts';
import { projection as typedProjection, type ProjectionContext } from '../../ledger/projection.ts';
import { ProjectionRunner } from '../../ledger/projection-runner.ts';
import { Supervisor } from '../../ledger/supervisor.ts';
import { namespaced } from '../../ledger/topics.ts';
import { brandEventsFixture, publishBrandsCreated, until } from '../support/brand-events.ts';

/**
 * A projection that writes through `ProjectionContext.db` (knex) as well as through `sql`: the runner runs the batch's
 * transaction itself, and knex's queries must run inside it, on its connection. Were one of them to run on another
 * connection of the pool, it would commit on its own: a batch that then fails would leave it behind, and the group's
 * event-by-event retry would meet it as a duplicate key.
 */
describe('a projection writing through knex', () => {
  const namespace = `batch-knex-${randomUUID().slice(0, 8)}`;
  const topic = namespaced(namespace, brandAggregate.events.name);
  const logger = pino({ level: 'silent' });
  let db: Knex;
  let pool: pg.Pool;
  let kafka: Kafka;
  let codec: EventCodec;
  const schemas: string[] = [];

  const names = ['alpha', 'beta', 'gamma', 'delta'];

  /** Each event's row through another knex entry point of the context: `db.table`, `db.raw`, the context's `table`. */
  const writeThroughKnex = async ({ db: knex, schema, table }: ProjectionContext, events: BrandCreated['data'][]) => {
    const [first, second] = events.map(({ name }) => ({ name }));
    if (first) await knex.table(`${schema}.seen`).insert(first);
    if (second) await knex.raw('insert into ??.seen (name) values (?)', [schema, second.name]);
    for (const rest of events.slice(2)) await table('seen').insert({ name: rest.name });
  };

  const projection = (name: string, failBatch: (size: number) => boolean) =>
    typedProjection<BrandCreated>({
      name,
      topics: [brandAggregate.events],
      migrations: [{ name: '001-seen', up: (knex, at) => knex.schema.withSchema(at).createTable('seen', (t) => t.text('name').primary()) }],
      canHandle: ['BrandCreated'],
      handle: async (events, context) => {
        await writeThroughKnex(
          context,
          events.map((event) => event.data),
        );
        if (failBatch(events.length)) throw new Error('the batch form failed after writing');
      },
    });

  const seen = (schema: string) => db(`${schema}.seen`).orderBy('name').pluck('name');

  beforeAll(async () => {
    ({ db, pool, kafka, codec } = await brandEventsFixture(namespace, 'batch-knex-test', logger));
    await publishBrandsCreated(codec, topic, names, 'batch-knex-test');
  });

  afterAll(async () => {
    for (const schema of schemas) await db?.raw('drop schema if exists ?? cascade', [schema]);
    await Promise.all([db?.destroy(), pool?.end()]);
  });

  const running = async (
    name: string,
    failBatch: (size: number) => boolean,
    test: (schema: string, supervisor: Supervisor) => Promise<void>,
  ) => {
    const schema = `batch_knex_${randomUUID().slice(0, 8)}`;
    schemas.push(schema);
    const supervisor = new Supervisor(`projection-${name}`, logger, { minDelayMs: 100, maxDelayMs: 400 });
    await supervisor.start(
      new ProjectionRunner(
        { kafka, codec, db, pool, namespace, logger },
        projection(name, failBatch),
        { schema, notify: false },
        supervisor,
      ),
    );
    try {
      await test(schema, supervisor);
    } finally {
      await supervisor.stop();
    }
  };

  it('commits what the batch form wrote through knex with the checkpoint', async () => {
    await running(
      'batch_knex_ok',
      () => false,
      async (schema, supervisor) => {
        await until('every event applied', async () => (await seen(schema)).length === names.length);
        expect(await seen(schema)).toEqual([...names].sort());
        await until('the checkpoint saved', async () => (await db(`${schema}.checkpoints`).pluck('offset')).includes('3'));
        expect(supervisor.status().restarts).toBe(0);
      },
    );
  });

  it('rolls back what the batch form wrote through knex when it fails: the event-by-event retry applies each event once', async () => {
    let failures = 0;
    await running(
      'batch_knex_failing',
      // A whole group fails after writing; a batch of one event does not.
      (size) => size > 1 && failures++ < 1_000,
      async (schema, supervisor) => {
        // The checkpoint moves only once a transaction applied the group: here, the event-by-event retry.
        await until('the checkpoint saved', async () => (await db(`${schema}.checkpoints`).pluck('offset')).includes('3'));
        expect(failures).toBeGreaterThan(0);
        expect(await seen(schema)).toEqual([...names].sort());
        expect(supervisor.status().restarts).toBe(0);
      },
    );
  });
});
