import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { brandAggregate, type BrandCreated } from '../../commands/catalog/brand.ts';
import { withDatabase } from '../../ledger/database.ts';
import type { EventCodec } from '../../ledger/event-codec.ts';
import type { Kafka } from '../../ledger/kafka.ts';
import { liveSchema, prepareProjectionSchema, projection } from '../../ledger/projection.ts';
import { KEYS_CHANNEL, ProjectionRunner } from '../../ledger/projection-runner.ts';
import { ProjectionWaiter } from '../../ledger/projection-waiter.ts';
import { Supervisor } from '../../ledger/supervisor.ts';
import { namespaced } from '../../ledger/topics.ts';
import { brandEventsFixture, publishBrandsCreated, until } from '../support/brand-events.ts';

/**
 * A projection that names await keys (`awaitKeyOf`): its live runner announces the keys each transaction applied, and
 * a wait under a key reads again only on its key's news, where a wait without one reads after every progress.
 */
describe('await keys of a live projection', () => {
  const namespace = `await-keys-${randomUUID().slice(0, 8)}`;
  const topic = namespaced(namespace, brandAggregate.events.name);
  const logger = pino({ level: 'silent' });
  const name = `keys_${randomUUID().slice(0, 8)}`;
  const keyed = projection<BrandCreated>({
    name,
    topics: [brandAggregate.events],
    migrations: [{ name: '001-seen', up: (knex, at) => knex.schema.withSchema(at).createTable('seen', (t) => t.text('name').primary()) }],
    canHandle: ['BrandCreated'],
    handle: async (events, { sql, schema }) => {
      await sql.query(`insert into "${schema}".seen (name) select unnest($1::text[])`, [events.map((e) => e.data.name)]);
    },
    awaitKeyOf: (event) => event.data.name,
  });
  const schema = liveSchema(keyed);
  const databaseUrl = withDatabase(inject('stack').postgresServerUrl, 'cl_projection_tests');
  let db: Knex;
  let pool: pg.Pool;
  let kafka: Kafka;
  let codec: EventCodec;
  let waiter: ProjectionWaiter;
  let supervisor: Supervisor;
  let listener: pg.Client;
  const notices: string[] = [];
  let progress = 0;

  const seen = async (brand: string) => (await db(`${schema}.seen`).where({ name: brand }).first('name')) as { name: string } | undefined;
  const seenCount = async () => Number(((await db(`${schema}.seen`).count({ n: '*' })) as { n: string }[])[0]?.n);
  /** Publishes one event and returns once the waiter has heard the runner's progress over it. */
  const applied = async (brand: string) => {
    const before = progress;
    await publishBrandsCreated(codec, topic, [brand], 'await-keys-test');
    await until(`the waiter heard ${brand} applied`, () => progress > before);
  };

  beforeAll(async () => {
    ({ db, pool, kafka, codec } = await brandEventsFixture(namespace, 'await-keys-test', logger));
    listener = new pg.Client({ connectionString: databaseUrl });
    await listener.connect();
    listener.on('notification', ({ payload }) => payload && notices.push(payload));
    await listener.query(`listen ${KEYS_CHANNEL}`);
    await prepareProjectionSchema(db, keyed, schema);
    waiter = new ProjectionWaiter(databaseUrl, db, [keyed], namespace, logger);
    await waiter.start();
    waiter.onProgress(name, () => progress++);
  });

  afterAll(async () => {
    await supervisor?.stop();
    await waiter?.stop();
    await listener?.end();
    await db?.raw('drop schema if exists ?? cascade', [schema]);
    await Promise.all([db?.destroy(), pool?.end()]);
  });

  it('announces every key of a transaction, in notices Postgres takes, whatever their number', async () => {
    // Published before the runner starts, so its first transactions hold far more keys than one notice can carry.
    const many = Array.from({ length: 400 }, (_, i) => `many-${String(i).padStart(3, '0')}-${randomUUID()}`);
    await publishBrandsCreated(codec, topic, many, 'await-keys-test');
    supervisor = new Supervisor('await-keys', logger, { minDelayMs: 100, maxDelayMs: 400 });
    await supervisor.start(
      new ProjectionRunner({ kafka, codec, db, pool, namespace, logger }, keyed, { schema, notify: true }, supervisor),
    );
    await until('every event applied', async () => (await seenCount()) === many.length);
    await until('every key announced', () => notices.flatMap((notice) => notice.split('|')[1]?.split(',') ?? []).length >= many.length);

    const announced = notices.map((notice) => notice.split('|'));
    expect(announced.every(([projectionName]) => projectionName === name)).toBe(true);
    expect(new Set(announced.flatMap(([, keys]) => keys?.split(',') ?? []))).toEqual(new Set(many));
    expect(Math.max(...notices.map((notice) => Buffer.byteLength(notice)))).toBeLessThan(8_000);
    expect(notices.length).toBeGreaterThan(1);
    expect(supervisor.status().restarts).toBe(0);
  });

  it("reads a keyed outcome again only on its key's news, where an unkeyed wait reads after every progress", async () => {
    let keyedReads = 0;
    let unkeyedReads = 0;
    const keyedWait = waiter.waitUntil(name, async () => (keyedReads++, seen('target')), 60_000, { key: 'TARGET' });
    const unkeyedWait = waiter.waitUntil(name, async () => (unkeyedReads++, seen('target')), 60_000);
    for (const other of ['other-1', 'other-2', 'other-3']) await applied(other);
    expect(keyedReads).toBe(1);
    expect(unkeyedReads).toBeGreaterThan(1);

    await applied('target');
    expect(await keyedWait).toEqual({ name: 'target' });
    expect(await unkeyedWait).toEqual({ name: 'target' });
    expect(keyedReads).toBe(2);
  });

  it('waits for the first read until the projection has applied the positions the outcome comes after', async () => {
    const end = Number(((await db(`${schema}.checkpoints`).where({ topic, partition: 0 }).first('offset')) as { offset: string }).offset);
    let reads = 0;
    // Two records on: the first of them applied brings no read; its key's news would.
    const wait = waiter.waitUntil(name, async () => (reads++, seen('later')), 60_000, {
      key: 'later',
      after: [{ topic, partition: 0, offset: String(end + 2) }],
    });
    await applied('unrelated');
    expect(reads).toBe(0);
    await applied('later');
    expect(await wait).toEqual({ name: 'later' });
    expect(reads).toBe(1);
  });
});
