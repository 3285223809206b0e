import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Partitioners } from 'kafkajs';
import type { Knex } from 'knex';
import { itemPushAggregate, type RedriveItemPush } from '../commands/integrations/item-push.ts';
import { kafkaBrokers, loadConfig } from '../ledger/config.ts';
import { createKnex } from '../ledger/database.ts';
import { createKafka } from '../ledger/kafka.ts';
import { createLogger } from '../ledger/logger.ts';
import { namespaced } from '../ledger/topics.ts';
import { deadLetters, type DeadLetterRow } from '../projections/integrations/push-queries.ts';

const usage = `usage: npm run dlq -- list [--tenant <uuid>] [--connection <uuid>] [--json]
       npm run dlq -- retry <itemPushId…> | --all [--tenant <uuid>] [--connection <uuid>] [--json]
  list   the dead-lettered product pushes (all tenants unless filtered)
  retry  re-drives them: each is pushed again from attempt 1`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ACTOR = { userId: null, email: 'dlq-cli', ip: null };

class UsageError extends Error {}

type Listed = {
  item_push_id: string;
  tenant_id: string;
  org_id: string;
  connection_id: string;
  product_id: string;
  action: string;
  attempts: number;
  reason: string;
  http_status: number | null;
  dead_lettered_at: string;
};

const listed = (row: DeadLetterRow): Listed => ({
  item_push_id: row.item_push_id,
  tenant_id: row.tenant_id,
  org_id: row.org_id,
  connection_id: row.connection_id,
  product_id: row.product_id,
  action: row.desired_action,
  attempts: row.failures,
  reason: row.last_error,
  http_status: row.last_http_status,
  dead_lettered_at: new Date(row.last_failed_at).toISOString(),
});

function table(rows: Listed[]): string {
  const columns: [string, (r: Listed) => string][] = [
    ['ITEM PUSH', (r) => r.item_push_id],
    ['TENANT', (r) => r.tenant_id],
    ['CONNECTION', (r) => r.connection_id],
    ['PRODUCT', (r) => r.product_id],
    ['ACTION', (r) => r.action],
    ['ATTEMPTS', (r) => String(r.attempts)],
    ['HTTP', (r) => (r.http_status === null ? '-' : String(r.http_status))],
    ['WHEN', (r) => r.dead_lettered_at],
    ['REASON', (r) => r.reason.replace(/\s+/g, ' ')],
  ];
  const cells = [columns.map(([title]) => title), ...rows.map((r) => columns.map(([, cell]) => cell(r)))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  return cells.map((line) => line.map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

function parse() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        tenant: { type: 'string' },
        connection: { type: 'string' },
        all: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { positionals, values } = parsed;
  const [command, ...ids] = positionals;
  if (values.help) return undefined;
  if (command !== 'list' && command !== 'retry') throw new UsageError(command ? `unknown command: ${command}` : 'no command given');
  for (const [name, value] of [
    ['--tenant', values.tenant],
    ['--connection', values.connection],
  ] as const) {
    if (value !== undefined && !UUID.test(value)) throw new UsageError(`${name} must be a UUID`);
  }
  if (command === 'list') {
    if (ids.length > 0 || values.all) throw new UsageError('list takes no ids and no --all');
  } else {
    if (values.all === ids.length > 0) throw new UsageError('retry takes item push ids or --all (one of them)');
    const wrong = ids.filter((id) => !UUID.test(id));
    if (wrong.length > 0) throw new UsageError(`not an item push id: ${wrong.join(', ')}`);
  }
  return {
    command,
    ids: [...new Set(ids.map((id) => id.toLowerCase()))],
    filter: { tenantId: values.tenant, connectionId: values.connection },
    json: values.json,
  };
}

/** The dead letters to re-drive: all that match the filter, or exactly the named ones (each must be dead-lettered). */
async function selected(db: Knex, ids: string[], filter: { tenantId?: string; connectionId?: string }): Promise<DeadLetterRow[]> {
  const rows = await deadLetters(db, filter);
  if (ids.length === 0) return rows;
  const byId = new Map(rows.map((row) => [row.item_push_id, row]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length > 0) throw new Error(`not dead-lettered (or not matching the filter): ${missing.join(', ')}; nothing re-driven`);
  return ids.map((id) => byId.get(id)!);
}

/** Lists dead-lettered product pushes from the push read model, or re-drives them through the item push aggregate. */
async function main(): Promise<number> {
  let args;
  try {
    args = parse();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`dlq: ${error.message}\n${usage}`);
    return 2;
  }
  if (!args) {
    console.log(usage);
    return 0;
  }
  const config = loadConfig({ AUTH_DEV_SECRET: 'dlq-does-not-authenticate', ...process.env });
  const db = createKnex(config.DATABASE_URL, { min: 0, max: 2 });
  try {
    if (args.command === 'list') {
      const rows = (await deadLetters(db, args.filter)).map(listed);
      if (args.json) console.log(JSON.stringify(rows, null, 2));
      else console.log(rows.length === 0 ? 'no dead-lettered pushes' : table(rows));
      return 0;
    }
    const rows = await selected(db, args.ids, args.filter);
    if (rows.length > 0) {
      const logger = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, 'dlq');
      const producer = createKafka(kafkaBrokers(config), 'commerce-ledger-dlq', logger).producer({
        idempotent: true,
        maxInFlightRequests: 1,
        // Keyed like the service's own commands, so each lands on its aggregate's partition.
        createPartitioner: Partitioners.DefaultPartitioner,
      });
      await producer.connect();
      try {
        const messages = rows.map((row) => {
          const command: RedriveItemPush = {
            type: 'RedriveItemPush',
            data: { itemPushId: row.item_push_id },
            metadata: {
              commandId: randomUUID(),
              tenantId: row.tenant_id,
              orgId: row.org_id,
              actor: ACTOR,
              issuedAt: Date.now(),
              correlationId: randomUUID(),
            },
          };
          return { key: row.item_push_id, value: JSON.stringify(command), headers: { 'command-type': command.type } };
        });
        await producer.send({ acks: -1, topic: namespaced(config.LEDGER_NAMESPACE, itemPushAggregate.commands.name), messages });
      } finally {
        await producer.disconnect();
      }
    }
    const redriven = rows.map(listed);
    if (args.json) console.log(JSON.stringify(redriven, null, 2));
    else if (redriven.length === 0) console.log('no dead-lettered pushes to re-drive');
    else console.log(`re-driven (${redriven.length}); each is pushed again shortly:\n${table(redriven)}`);
    return 0;
  } finally {
    await db.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`dlq: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
