import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brandAggregate, type BrandCreated } from '../../commands/catalog/brand.ts';
import type { EventCodec } from '../../ledger/event-codec.ts';
import { ensureTopics, type Kafka } from '../../ledger/kafka.ts';
import { liveSchema, projection } from '../../ledger/projection.ts';
import { ProjectionRunner } from '../../ledger/projection-runner.ts';
import { Supervisor } from '../../ledger/supervisor.ts';
import { namespaced } from '../../ledger/topics.ts';
import { brandEventsFixture, publishBrandsCreated, until } from '../support/brand-events.ts';

/**
 * Two projections in one runner: one consumer group reads the events once, and both read models and both checkpoints
 * commit in one transaction, so a poison event of one holds both back and neither applies anything twice. Members of
 * different topics each get their own topics' events, checkpoints and lag.
 */
describe('projections sharing a runner', () => {
  const namespace = `projection-group-${randomUUID().slice(0, 8)}`;
  const topic = namespaced(namespace, brandAggregate.events.name);
  const logger = pino({ level: 'silent' });
  let db: Knex;
  let pool: pg.Pool;
  let kafka: Kafka;
  let codec: EventCodec;
  const schemas: string[] = [];
  let healed = false;

  const seenBy = (name: string, failsOn?: string) =>
    projection<BrandCreated>({
      name,
      topics: [brandAggregate.events],
      migrations: [{ name: '001-seen', up: (knex, at) => knex.schema.withSchema(at).createTable('seen', (t) => t.text('name').primary()) }],
      canHandle: ['BrandCreated'],
      handle: async (events, { sql, schema }) => {
        if (events.some((event) => event.data.name === failsOn) && !healed) throw new Error(`${name} cannot take ${failsOn}`);
        await sql.query(`insert into "${schema}".seen (name) select unnest($1::text[])`, [events.map((e) => e.data.name)]);
      },
    });

  const seen = (schema: string) => db(`${schema}.seen`).orderBy('name').pluck('name');
  const checkpoint = (schema: string) => db(`${schema}.checkpoints`).where({ topic, partition: 0 }).pluck('offset');

  // A second events topic of the same records, for a member that reads another topic than its partner.
  const otherEvents = { ...brandAggregate.events, name: `${brandAggregate.events.name}.other` };

  beforeAll(async () => {
    ({ db, pool, kafka, codec } = await brandEventsFixture(namespace, 'projection-group-test', logger));
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, namespace, [otherEvents], 1, 1_000_000);
    await admin.disconnect();
    await codec.registerAll([otherEvents]);
  });

  afterAll(async () => {
    for (const schema of schemas) await db?.raw('drop schema if exists ?? cascade', [schema]);
    await Promise.all([db?.destroy(), pool?.end()]);
  });

  it('applies each event once to both read models, in one transaction, through one consumer group, and a poison event of one holds back both', async () => {
    const suffix = randomUUID().slice(0, 8);
    const first = seenBy(`group_first_${suffix}`);
    const second = seenBy(`group_second_${suffix}`, 'poison');
    const firstSchema = `group_first_${suffix}`;
    const secondSchema = liveSchema(second);
    schemas.push(firstSchema, secondSchema);
    await publishBrandsCreated(codec, topic, ['alpha', 'poison', 'omega'], 'projection-group-test');

    const supervisor = new Supervisor('projection-group', logger, { minDelayMs: 100, maxDelayMs: 400 });
    await supervisor.start(
      new ProjectionRunner(
        { kafka, codec, db, pool, namespace, logger },
        [first, second],
        { schema: firstSchema, notify: false },
        supervisor,
      ),
    );
    try {
      await until('the failing member stopped the runner', () => supervisor.status().restarts >= 1);
      // The event-by-event retry names the member and the event; the other member applied nothing either.
      expect(supervisor.status().lastError).toMatch(new RegExp(`projection ${second.name} cannot apply BrandCreated at ${topic}/0@1`));
      expect(await seen(firstSchema)).toEqual([]);
      expect(await seen(secondSchema)).toEqual([]);

      healed = true;
      await until('both read models hold every event', async () => (await seen(secondSchema)).length === 3);
      expect(await seen(firstSchema)).toEqual(['alpha', 'omega', 'poison']);
      expect(await seen(secondSchema)).toEqual(['alpha', 'omega', 'poison']);
      expect(await checkpoint(firstSchema)).toEqual(['2']);
      expect(await checkpoint(secondSchema)).toEqual(['2']);

      const admin = kafka.admin();
      await admin.connect();
      const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((id) => id.startsWith(`${namespace}.`));
      await admin.disconnect();
      expect(groups).toHaveLength(1);
      expect(groups[0]).toContain(`${first.name}+${second.name}`);
    } finally {
      await supervisor.stop();
    }
  });

  it('gives members of different topics only their own events, checkpoints and lag', async () => {
    const suffix = randomUUID().slice(0, 8);
    const otherTopic = namespaced(namespace, otherEvents.name);
    const first = seenBy(`split_first_${suffix}`);
    const second = { ...seenBy(`split_second_${suffix}`), topics: [otherEvents] };
    const [firstSchema, secondSchema] = [`split_first_${suffix}`, liveSchema(second)];
    schemas.push(firstSchema, secondSchema);
    await publishBrandsCreated(codec, topic, ['first-1', 'first-2'], 'projection-group-test');
    await publishBrandsCreated(codec, otherTopic, ['second-1', 'second-2', 'second-3'], 'projection-group-test');

    const supervisor = new Supervisor('projection-split', logger, { minDelayMs: 100, maxDelayMs: 400 });
    const runner = new ProjectionRunner(
      { kafka, codec, db, pool, namespace, logger },
      [first, second],
      { schema: firstSchema, notify: false },
      supervisor,
    );
    await supervisor.start(runner);
    try {
      await until(
        'both read models hold their events',
        async () => (await seen(firstSchema)).includes('first-2') && (await seen(secondSchema)).length === 3,
      );
      expect(await seen(firstSchema)).toEqual(expect.arrayContaining(['first-1', 'first-2']));
      expect(await seen(firstSchema)).not.toEqual(expect.arrayContaining(['second-1']));
      expect(await seen(secondSchema)).toEqual(['second-1', 'second-2', 'second-3']);
      const checkpoints = (schema: string) => db(`${schema}.checkpoints`).orderBy('topic').select('topic', 'partition', 'offset');
      // The first member's topic also holds the earlier test's events: its checkpoint is that topic's end, whatever it is.
      expect((await checkpoints(firstSchema)).map((row) => row.topic)).toEqual([topic]);
      expect(await checkpoints(secondSchema)).toEqual([{ topic: otherTopic, partition: 0, offset: '2' }]);
      expect(runner.lagBehind(first.name)).toBe(0);
      expect(runner.lagBehind(second.name)).toBe(0);
      expect(() => runner.lagBehind('neither')).toThrow(/not a member/);
    } finally {
      await supervisor.stop();
    }
  });
});
