// What users would pick instead of the ledger's webhook receiver: a bare fastify route that verifies the HMAC over the
// raw body and keeps each event once in a Postgres outbox table (insert, on conflict do nothing), answering whether the
// delivery was a duplicate, as the service's receiver does.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';
import { ensureDatabase, withDatabase } from '../ledger/database.ts';
import { dropDatabase } from './postgres-baseline.ts';

export type WebhookOutboxBaseline = { url: string; database: string; close: () => Promise<void> };

export async function startWebhookOutboxBaseline(postgresServerUrl: string, secret: string): Promise<WebhookOutboxBaseline> {
  const database = `bench_${randomBytes(5).toString('hex')}`;
  const databaseUrl = withDatabase(postgresServerUrl, database);
  await ensureDatabase(databaseUrl);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  pool.on('error', () => undefined); // the forced drop at the end
  await pool.query(`create table outbox (
    connection_id text not null, event_type text not null, object_id text not null, body jsonb not null,
    received_at timestamptz not null default now(), primary key (connection_id, event_type, object_id))`);

  const app = Fastify();
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post('/unified/webhook', async (request, reply) => {
    const header = request.headers['x-unified-signature'];
    if (typeof header !== 'string' || !/^[0-9a-fA-F]{64}$/.test(header)) return reply.code(401).send({ error: 'unsigned' });
    const raw = request.body as Buffer;
    if (!timingSafeEqual(createHmac('sha256', secret).update(raw).digest(), Buffer.from(header, 'hex')))
      return reply.code(401).send({ error: 'not verified' });
    const delivery = JSON.parse(raw.toString('utf8')) as { connection_id?: string; event?: string; data?: { id?: string } };
    if (!delivery.connection_id || !delivery.event || !delivery.data?.id) return reply.code(400).send({ error: 'not an event' });
    const { rowCount } = await pool.query(
      'insert into outbox (connection_id, event_type, object_id, body) values ($1, $2, $3, $4) on conflict do nothing',
      [delivery.connection_id, delivery.event, delivery.data.id, raw.toString('utf8')],
    );
    return { status: 'received', duplicate: rowCount === 0 };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}/unified/webhook`,
    database,
    close: async () => {
      await app.close();
      await pool.end();
      await dropDatabase(postgresServerUrl, database);
    },
  };
}
