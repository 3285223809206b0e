import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Kafka } from '../../ledger/kafka.ts';
import type { Knex } from 'knex';
import type pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brandAggregate, type BrandCreated } from '../../commands/catalog/brand.ts';
import type { EventCodec } from '../../ledger/event-codec.ts';
import { projectionOf } from '../../ledger/projection.ts';
import { ProjectionRunner } from '../../ledger/projection-runner.ts';
import { Supervisor } from '../../ledger/supervisor.ts';
import { namespaced } from '../../ledger/topics.ts';
import { brandEventsFixture, publishBrandsCreated, until } from '../support/brand-events.ts';

/**
 * A projection that cannot apply an event (a bug, a column too small) must say which event, in one line, retry with
 * backoff rather than spin, apply nothing of the failed batch, and go on exactly once when the cause is fixed.
 */
describe('a projection that fails on one event', () => {
  const namespace = `poison-${randomUUID().slice(0, 8)}`;
  const topic = namespaced(namespace, brandAggregate.events.name);
  const lines: { msg?: string; err?: { message?: string }; lastError?: string }[] = [];
  const logger = pino(
    { level: 'warn' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    }),
  );
  let db: Knex;
  let pool: pg.Pool;
  let kafka: Kafka;
  let codec: EventCodec;
  let healed = false;
  const schema = `poison_${randomUUID().slice(0, 8)}`;

  const projection = projectionOf<BrandCreated>({
    name: `poison_test`,
    topics: [brandAggregate.events],
    migrations: [{ name: '001-seen', up: (knex, at) => knex.schema.withSchema(at).createTable('seen', (t) => t.text('name').primary()) }],
    handlers: {
      BrandCreated: async (event, { table }) => {
        if (event.data.name === 'poison' && !healed) throw new Error('value too long for type character varying(5)');
        await table('seen').insert({ name: event.data.name });
      },
    },
  });

  const publish = (names: string[]) => publishBrandsCreated(codec, topic, names, 'poison-test');

  beforeAll(async () => {
    ({ db, pool, kafka, codec } = await brandEventsFixture(namespace, 'poison-test', logger));
  });

  afterAll(async () => {
    await db?.raw('drop schema if exists ?? cascade', [schema]);
    await Promise.all([db?.destroy(), pool?.end()]);
  });

  it('names the event, retries with backoff, applies nothing of the failed batch, and resumes exactly once when fixed', async () => {
    const supervisor = new Supervisor('projection-poison_test', logger, { minDelayMs: 100, maxDelayMs: 400 });
    const runner = new ProjectionRunner({ kafka, codec, db, pool, namespace, logger }, projection, { schema, notify: false }, supervisor);
    await publish(['first', 'poison', 'third']);
    await supervisor.start(runner);
    try {
      await until('the supervisor restarted the failing runner twice', () => supervisor.status().restarts >= 2);
      const status = supervisor.status();
      expect(status.lastError).toMatch(new RegExp(`cannot apply BrandCreated at ${topic}/0@1: value too long`));

      // One line names the event's coordinates; repeats of the same failure are held back, not printed per retry.
      const naming = lines.filter((line) => `${line.err?.message ?? ''}`.includes(`${topic}/0@1`));
      expect(naming.length).toBeGreaterThanOrEqual(1);
      expect(naming.length).toBeLessThan(status.restarts + 1);

      // The failed batch rolled back whole: the event before the poison one is not half-applied on its own either.
      expect(await db(`${schema}.seen`).pluck('name')).toEqual([]);

      healed = true;
      await until('every event applied after the fix', async () => (await db(`${schema}.seen`).count({ n: '*' }))[0]?.n === '3');
      expect((await db(`${schema}.seen`).orderBy('name').pluck('name')).sort()).toEqual(['first', 'poison', 'third']);
      const [checkpoint] = await db(`${schema}.checkpoints`).where({ topic, partition: 0 }).pluck('offset');
      expect(checkpoint).toBe('2');
      await until('running again', () => supervisor.status().state === 'running');
    } finally {
      await supervisor.stop();
    }
  });
});
