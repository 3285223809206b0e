import { parseArgs } from 'node:util';
import { loadConfig, kafkaBrokers } from '../ledger/config.ts';
import { createKnex } from '../ledger/database.ts';
import { EventCodec } from '../ledger/event-codec.ts';
import { createKafka } from '../ledger/kafka.ts';
import { createLogger } from '../ledger/logger.ts';
import { rebuildProjection } from '../ledger/projection-rebuild.ts';
import { projectionNamed, projections } from '../projections/index.ts';

const usage = `usage: npm run replay -- <projection|all> [--no-swap]
  projections: ${projections.map((p) => p.name).join(', ')}`;

/** Rebuilds read models from offset 0 into a fresh schema, shows progress, then swaps it in. */
async function main(): Promise<void> {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { 'no-swap': { type: 'boolean', default: false } } });
  const name = positionals[0];
  const selected = name === 'all' ? projections : [name && projectionNamed(name)].filter((p) => !!p);
  if (selected.length === 0) {
    console.error(usage);
    process.exit(2);
  }
  const config = loadConfig({ AUTH_DEV_SECRET: 'replay-does-not-authenticate', ...process.env });
  const logger = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL);
  const kafka = createKafka(kafkaBrokers(config), 'commerce-ledger-replay', logger);
  const codec = EventCodec.connect(config.SCHEMA_REGISTRY_URL, config.LEDGER_NAMESPACE);
  const db = createKnex(config.DATABASE_URL);
  try {
    for (const projection of selected) {
      const started = Date.now();
      let last = 0;
      const { schema } = await rebuildProjection({ kafka, codec, db, namespace: config.LEDGER_NAMESPACE, logger }, projection, {
        swap: !values['no-swap'],
        onProgress: ({ applied, total }) => {
          if (Date.now() - last < 250 && applied < total) return;
          last = Date.now();
          const percent = total === 0n ? 100 : Number((applied * 100n) / total);
          process.stderr.write(`\r${projection.name}: ${applied}/${total} log records (${percent}%)`);
        },
      });
      process.stderr.write('\n');
      console.log(`${projection.name}: rebuilt into ${schema} in ${Date.now() - started} ms`);
    }
  } finally {
    await db.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
