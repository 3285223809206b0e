import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { Knex } from 'knex';
import { inboundDeadLetterAggregate, type RedriveInboundEvent } from '../commands/integrations/inbound-dead-letter.ts';
import { itemPushAggregate, type RedriveItemPush } from '../commands/integrations/item-push.ts';
import { loadConfig } from '../config.ts';
import { kafkaBrokers } from '../ledger/config-derived.ts';
import { createKnex } from '../ledger/database.ts';
import { createKafka, keyedProducer, type TopicRecords } from '../ledger/kafka.ts';
import { createLogger } from '../ledger/logger.ts';
import { namespaced } from '../ledger/topics.ts';
import { pendingInboundDeadLetters, type InboundDeadLetterRow } from '../projections/integrations/inbound-queries.ts';
import { deadLetters, type DeadLetterRow } from '../projections/integrations/push-queries.ts';

const usage = `usage: npm run dlq -- list [--kind push|inbound] [--tenant <uuid>] [--connection <uuid>] [--json]
       npm run dlq -- retry <id…> | --all [--kind push|inbound] [--tenant <uuid>] [--connection <uuid>] [--json]
  list   the dead letters (all tenants unless filtered): product pushes (kind push) and inbound webhook
         events that could not be mapped into orders (kind inbound)
  retry  re-drives them by id (an item push id or an inbound dead letter id): a push is pushed again from
         attempt 1, an inbound event goes back to the order mapping`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KINDS = ['push', 'inbound'] as const;
type Kind = (typeof KINDS)[number];
const ACTOR = { userId: null, email: 'dlq-cli', ip: null };
// The inbound query caps its listing; the operator's view is every pending one.
const ALL_INBOUND = 1_000_000;

class UsageError extends Error {}

type Common = {
  kind: Kind;
  id: string;
  tenant_id: string;
  org_id: string;
  connection_id: string;
  reason: string;
  dead_lettered_at: string;
};
type ListedPush = Common & {
  kind: 'push';
  item_push_id: string;
  product_id: string;
  action: string;
  attempts: number;
  http_status: number | null;
};
type ListedInbound = Common & {
  kind: 'inbound';
  inbound_dead_letter_id: string;
  event: string;
  external_id: string | null;
  delivery_id: string;
  attempts: number;
};
type Listed = ListedPush | ListedInbound;

const listedPush = (row: DeadLetterRow): ListedPush => ({
  kind: 'push',
  id: row.item_push_id,
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

const listedInbound = (row: InboundDeadLetterRow): ListedInbound => ({
  kind: 'inbound',
  id: row.id,
  inbound_dead_letter_id: row.id,
  tenant_id: row.tenant_id,
  org_id: row.org_id,
  connection_id: row.connection_id,
  event: row.event,
  external_id: row.external_id,
  delivery_id: row.delivery_id,
  // Times the mapping filed it: once, plus once per re-drive that failed again.
  attempts: row.times_dead_lettered,
  reason: row.reason,
  dead_lettered_at: new Date(row.dead_lettered_at).toISOString(),
});

function table(rows: Listed[]): string {
  const columns: [string, (r: Listed) => string][] = [
    ['KIND', (r) => r.kind],
    ['ID', (r) => r.id],
    ['TENANT', (r) => r.tenant_id],
    ['CONNECTION', (r) => r.connection_id],
    ['SUBJECT', (r) => (r.kind === 'push' ? `${r.action} product ${r.product_id}` : `${r.event} ${r.external_id ?? '-'}`)],
    ['ATTEMPTS', (r) => String(r.attempts)],
    ['HTTP', (r) => (r.kind === 'push' && r.http_status !== null ? String(r.http_status) : '-')],
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
        kind: { type: 'string' },
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
  const kind = values.kind;
  if (kind !== undefined && !(KINDS as readonly string[]).includes(kind)) throw new UsageError('--kind must be push or inbound');
  if (command === 'list') {
    if (ids.length > 0 || values.all) throw new UsageError('list takes no ids and no --all');
  } else {
    if (values.all === ids.length > 0) throw new UsageError('retry takes dead letter ids or --all (one of them)');
    const wrong = ids.filter((id) => !UUID.test(id));
    if (wrong.length > 0) throw new UsageError(`not a dead letter id: ${wrong.join(', ')}`);
  }
  return {
    command,
    ids: [...new Set(ids.map((id) => id.toLowerCase()))],
    kinds: kind === undefined ? KINDS : [kind as Kind],
    filter: { tenantId: values.tenant, connectionId: values.connection },
    json: values.json,
  };
}

type Filter = { tenantId?: string; connectionId?: string };

/** Every dead letter of the kinds asked for that matches the filter: pushes first, then inbound events, each oldest first. */
async function pending(db: Knex, kinds: readonly Kind[], filter: Filter): Promise<Listed[]> {
  const pushes = kinds.includes('push') ? (await deadLetters(db, filter)).map(listedPush) : [];
  const inbound = kinds.includes('inbound')
    ? (await pendingInboundDeadLetters(db, ALL_INBOUND))
        .filter(
          (row) =>
            (!filter.tenantId || row.tenant_id === filter.tenantId) && (!filter.connectionId || row.connection_id === filter.connectionId),
        )
        .map(listedInbound)
    : [];
  return [...pushes, ...inbound];
}

/** The dead letters to re-drive: all that match, or exactly the named ones (each must be dead-lettered, of either kind). */
async function selected(db: Knex, ids: string[], kinds: readonly Kind[], filter: Filter): Promise<Listed[]> {
  const rows = await pending(db, kinds, filter);
  if (ids.length === 0) return rows;
  const byId = new Map(rows.map((row) => [row.id, row]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length > 0) throw new Error(`not dead-lettered (or not matching the filter): ${missing.join(', ')}; nothing re-driven`);
  return ids.map((id) => byId.get(id)!);
}

const metadataOf = (row: Listed) => ({
  commandId: randomUUID(),
  tenantId: row.tenant_id,
  orgId: row.org_id,
  actor: ACTOR,
  issuedAt: Date.now(),
  correlationId: randomUUID(),
});

/** The re-drive commands, keyed like the service's own so each lands on its aggregate's partition, by topic. */
function redrives(namespace: string, rows: Listed[]): TopicRecords[] {
  const pushes = rows.flatMap((row) => {
    if (row.kind !== 'push') return [];
    const command: RedriveItemPush = { type: 'RedriveItemPush', data: { itemPushId: row.id }, metadata: metadataOf(row) };
    return [{ key: row.id, value: JSON.stringify(command), headers: { 'command-type': command.type } }];
  });
  const inbound = rows.flatMap((row) => {
    if (row.kind !== 'inbound') return [];
    const command: RedriveInboundEvent = { type: 'RedriveInboundEvent', data: { inboundDeadLetterId: row.id }, metadata: metadataOf(row) };
    return [{ key: row.id, value: JSON.stringify(command), headers: { 'command-type': command.type } }];
  });
  return [
    { topic: namespaced(namespace, itemPushAggregate.commands.name), messages: pushes },
    { topic: namespaced(namespace, inboundDeadLetterAggregate.commands.name), messages: inbound },
  ].filter((t) => t.messages.length > 0);
}

const nothing = (kinds: readonly Kind[]) =>
  kinds.length === 2 ? 'dead letters' : kinds[0] === 'push' ? 'dead-lettered pushes' : 'dead-lettered inbound events';

/** Lists dead letters from the push and inbound read models, or re-drives them through their aggregates. */
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
      const rows = await pending(db, args.kinds, args.filter);
      if (args.json) console.log(JSON.stringify(rows, null, 2));
      else console.log(rows.length === 0 ? `no ${nothing(args.kinds)}` : table(rows));
      return 0;
    }
    const rows = await selected(db, args.ids, args.kinds, args.filter);
    if (rows.length > 0) {
      const logger = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, 'dlq');
      const producer = keyedProducer(createKafka(kafkaBrokers(config), 'commerce-ledger-dlq', logger), { idempotent: true });
      await producer.connect();
      try {
        await producer.sendBatch({ topicMessages: redrives(config.LEDGER_NAMESPACE, rows) });
      } finally {
        await producer.disconnect();
      }
    }
    if (args.json) console.log(JSON.stringify(rows, null, 2));
    else if (rows.length === 0) console.log(`no ${nothing(args.kinds)} to re-drive`);
    else console.log(`re-driven (${rows.length}); each push is pushed again and each inbound event mapped again shortly:\n${table(rows)}`);
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
