import fs from 'node:fs';
import { keyedProducer, logEnds, quietKafka } from '../../ledger/kafka.ts';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { describeKafka } from '../../stack/kafka/kafka.ts';
import { startPrivateKafka, type PrivateKafka } from '../support/private-kafka.ts';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.ts';

let postgres: PrivatePostgres | undefined;
let kafka: PrivateKafka | undefined;
afterAll(async () => {
  await Promise.all([postgres?.destroy(), kafka?.destroy()]);
});

const query = async (url: string, sql: string): Promise<unknown[]> => {
  const client = new pg.Client({ connectionString: `${url}postgres`, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
};

describe('private dependencies of a test', () => {
  it('a Postgres cluster stops, starts again on the same port with its data, and leaves nothing behind', async () => {
    postgres = await startPrivatePostgres('self-test-postgres');
    await query(postgres.url, "create table kept as select 'survives' as word");

    await postgres.stop();
    await expect(query(postgres.url, 'select 1')).rejects.toThrow(/ECONNREFUSED/);

    await postgres.start();
    expect(await query(postgres.url, 'select word from kept')).toEqual([{ word: 'survives' }]);

    await postgres.destroy();
    expect(fs.existsSync(postgres.dir)).toBe(false);
    await expect(query(postgres.url, 'select 1')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('a Kafka broker stops, starts again on the same ports with its log, and leaves nothing behind', async () => {
    kafka = await startPrivateKafka('self-test-kafka');
    const client = quietKafka(kafka.brokers, 'private-self-test');
    const admin = client.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'kept', numPartitions: 1 }] });
    await admin.disconnect();
    const producer = keyedProducer(client);
    await producer.connect();
    await producer.send({ topic: 'kept', messages: [{ value: 'survives' }] });
    await producer.disconnect();

    await kafka.stop();
    expect(await describeKafka(kafka.brokers)).toBeUndefined();

    await kafka.start();
    const reader = client.admin();
    await reader.connect();
    const ends = await logEnds(reader, 'kept');
    await reader.disconnect();
    expect(ends).toEqual(new Map([[0, 1n]]));

    await kafka.destroy();
    expect(fs.existsSync(kafka.dir)).toBe(false);
    expect(await describeKafka(kafka.brokers)).toBeUndefined();
  });
});
