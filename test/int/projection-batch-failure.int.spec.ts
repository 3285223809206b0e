import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Kafka } from '../../ledger/kafka.ts';
import type { Knex } from 'knex';
import type pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brandAggregate, type BrandCreated } from '../../commands/catalog/brand.ts';
import type { EventCodec } from '../../ledger/event-codec.ts';
import { projection, type ProjectionContext } from '../../ledger/projection.ts';
import { ProjectionRunner } from '../../ledger/projection-runner.ts';
import { Supervisor } from '../../ledger/supervisor.ts';
import { namespaced } from '../../ledger/topics.ts';
import { brandEventsFixture, publishBrandsCreated, until } from '../support/brand-events.ts';

/**
 * A projection whose batch fails: the runner applies the group again as one-event batches, so a poison event is named
 * by its coordinates (and nothing of its group is applied), and a group that fails only as a whole is applied all the
 * same, exactly once.
 */
describe('a projection whose batch form fails', () => {
  const namespace = `batch-failure-${randomUUID().slice(0, 8)}`;
  const topic = namespaced(namespace, brandAggregate.events.name);
  const lines: { msg?: string }[] = [];
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
  const schemas: string[] = [];

  /** Fails on the events `poison` names, in a batch of any size, and on every batch of several when `wholeFails`. */
  const withBatchForm = (name: string, failing: { poison: (name: string) => boolean; wholeFails: boolean }) => {
    const insert = async ({ sql, schema }: ProjectionContext, names: string[]) => {
      await sql.query(`insert into "${schema}".seen (name) select unnest($1::text[])`, [names]);
    };
    return projection<BrandCreated>({
      name,
      topics: [brandAggregate.events],
      migrations: [{ name: '001-seen', up: (knex, at) => knex.schema.withSchema(at).createTable('seen', (t) => t.text('name').primary()) }],
      canHandle: ['BrandCreated'],
      handle: async (events, context) => {
        if (events.some((event) => failing.poison(event.data.name))) throw new Error('value too long for type character varying(5)');
        if (failing.wholeFails && events.length > 1) throw new Error('the batch form failed');
        await insert(
          context,
          events.map((event) => event.data.name),
        );
      },
    });
  };

  const publish = (names: string[]) => publishBrandsCreated(codec, topic, names, 'batch-failure-test');

  const seen = (schema: string) => db(`${schema}.seen`).orderBy('name').pluck('name');

  beforeAll(async () => {
    ({ db, pool, kafka, codec } = await brandEventsFixture(namespace, 'batch-failure-test', logger));
    // One key: one partition, in this order (offsets 0, 1, 2).
    await publish(['first', 'poison', 'third']);
  });

  afterAll(async () => {
    for (const schema of schemas) await db?.raw('drop schema if exists ?? cascade', [schema]);
    await Promise.all([db?.destroy(), pool?.end()]);
  });

  const running = async (projection: ReturnType<typeof withBatchForm>, test: (schema: string, supervisor: Supervisor) => Promise<void>) => {
    const schema = `batch_failure_${randomUUID().slice(0, 8)}`;
    schemas.push(schema);
    const supervisor = new Supervisor(`projection-${projection.name}`, logger, { minDelayMs: 100, maxDelayMs: 400 });
    await supervisor.start(
      new ProjectionRunner({ kafka, codec, db, pool, namespace, logger }, projection, { schema, notify: false }, supervisor),
    );
    try {
      await test(schema, supervisor);
    } finally {
      await supervisor.stop();
    }
  };

  it('names the poison event by its coordinates, applies nothing of its group, and resumes exactly once when fixed', async () => {
    let healed = false;
    const projection = withBatchForm('batch_poison', { poison: (name) => name === 'poison' && !healed, wholeFails: false });
    await running(projection, async (schema, supervisor) => {
      await until('the supervisor restarted the failing runner', () => supervisor.status().restarts >= 1);
      expect(supervisor.status().lastError).toMatch(new RegExp(`cannot apply BrandCreated at ${topic}/0@1: value too long`));
      expect(await seen(schema)).toEqual([]);

      healed = true;
      await until('every event applied after the fix', async () => (await seen(schema)).length === 3);
      expect(await seen(schema)).toEqual(['first', 'poison', 'third']);
      expect(await db(`${schema}.checkpoints`).where({ topic, partition: 0 }).pluck('offset')).toEqual(['2']);
    });
  });

  it('applies a group that fails only as a whole event by event, once, and says so', async () => {
    const projection = withBatchForm('batch_broken', { poison: () => false, wholeFails: true });
    await running(projection, async (schema, supervisor) => {
      await until('every event applied', async () => (await seen(schema)).length === 3);
      expect(await seen(schema)).toEqual(['first', 'poison', 'third']);
      expect(supervisor.status().restarts).toBe(0);
      expect(lines.some((line) => line.msg === 'the batch form failed; applying the group event by event')).toBe(true);
    });
  });
});
