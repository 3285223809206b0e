// A baseline server in a process of its own, as the service runs in one: `node --import tsx bench/baseline-server.ts
// <kind> <postgres server url> [secret]`. It prints one JSON line ({ url, database }) once it listens, and closes
// (dropping its database) on SIGTERM. Kinds: `products` (bench/postgres-baseline.ts), `webhook-outbox`
// (bench/webhook-baseline.ts).
import { startPostgresBaseline } from './postgres-baseline.ts';
import { startWebhookOutboxBaseline } from './webhook-baseline.ts';

const [kind, postgresServerUrl, secret] = process.argv.slice(2);
if (!postgresServerUrl || (kind !== 'products' && kind !== 'webhook-outbox')) {
  console.error('usage: baseline-server.ts products|webhook-outbox <postgres server url> [secret]');
  process.exit(2);
}
const server =
  kind === 'products' ? await startPostgresBaseline(postgresServerUrl) : await startWebhookOutboxBaseline(postgresServerUrl, secret ?? '');
process.stdout.write(`${JSON.stringify({ url: server.url, database: server.database })}\n`);
process.once('SIGTERM', () => {
  server.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
});
