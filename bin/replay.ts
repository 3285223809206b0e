import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { loadConfig } from '../config.ts';
import { kafkaBrokers } from '../ledger/config-derived.ts';
import { createKnex, createPool } from '../ledger/database.ts';
import { EventCodec } from '../ledger/event-codec.ts';
import { createKafka } from '../ledger/kafka.ts';
import { createLogger } from '../ledger/logger.ts';
import { RebuildError, rebuildProjection, type RebuildProgress } from '../ledger/projection-rebuild.ts';
import { projectionNamed, projections } from '../projections/index.ts';

const DEFAULT_TIMEOUT_SECONDS = 600;

const usage = `usage: npm run replay -- <projection|all> [--no-swap] [--timeout <seconds>]
  projections: ${projections.map((p) => p.name).join(', ')}
  --no-swap            rebuild into rm_<name>__rebuild_<ts> and leave it there, beside the live schema
  --timeout <seconds>  give up (exit 1, dropping what it built) if a projection has not caught up by then; default ${DEFAULT_TIMEOUT_SECONDS}`;

/** How progress is shown: a bar per projection on a terminal, plain lines (at most one per 2 s per projection) otherwise. */
type Display = {
  progress: (name: string, progress: RebuildProgress) => void;
  note: (line: string) => void;
  done: (name: string) => void;
  stop: () => void;
};

function terminalDisplay(names: string[]): Display {
  const multibar = new cliProgress.MultiBar(
    {
      format: '{name} [{bar}] {percentage}% | {value}/{total} records | {status}',
      barsize: 30,
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      stream: process.stderr,
    },
    cliProgress.Presets.shades_classic,
  );
  let stopped = false;
  const width = Math.max(...names.map((n) => n.length));
  const bars = new Map(names.map((name) => [name, multibar.create(0, 0, { name: name.padEnd(width), status: 'waiting' })]));
  return {
    progress: (name, { applied, total }) => {
      const bar = bars.get(name);
      bar?.setTotal(Number(total));
      bar?.update(Number(applied), { status: applied >= total ? 'swapping' : 'replaying' });
    },
    note: (line) => multibar.log(`${line}\n`),
    done: (name) => bars.get(name)?.update({ status: 'done' }),
    stop: () => {
      if (stopped) return;
      stopped = true;
      multibar.stop();
    },
  };
}

function plainDisplay(): Display {
  const last = new Map<string, number>();
  return {
    progress: (name, { applied, total }) => {
      const complete = applied >= total;
      if (!complete && Date.now() - (last.get(name) ?? 0) < 2_000) return;
      if (complete && last.get(name) === Infinity) return;
      last.set(name, complete ? Infinity : Date.now());
      const percent = total === 0n ? 100 : Number((applied * 100n) / total);
      process.stderr.write(`${name}: ${applied}/${total} log records (${percent}%)\n`);
    },
    note: (line) => process.stderr.write(`${line}\n`),
    done: () => undefined,
    stop: () => undefined,
  };
}

/** Rebuilds read models from offset 0 into a fresh schema, shows progress, then swaps it in. */
async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        'no-swap': { type: 'boolean', default: false },
        timeout: { type: 'string', default: String(DEFAULT_TIMEOUT_SECONDS) },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    console.error(`replay: ${(error as Error).message}\n${usage}`);
    return 2;
  }
  const { positionals, values } = parsed;
  if (values.help) {
    console.log(usage);
    return 0;
  }
  const name = positionals[0];
  const selected = name === 'all' ? projections : [name && projectionNamed(name)].filter((p) => !!p);
  const timeoutSeconds = Number(values.timeout);
  if (selected.length === 0 || positionals.length > 1 || !(timeoutSeconds > 0)) {
    console.error(usage);
    return 2;
  }
  const config = loadConfig({ AUTH_DEV_SECRET: 'replay-does-not-authenticate', ...process.env });
  const logger = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL);
  const kafka = createKafka(kafkaBrokers(config), 'commerce-ledger-replay', logger);
  const codec = EventCodec.connect(config.SCHEMA_REGISTRY_URL, config.LEDGER_NAMESPACE);
  const db = createKnex(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL);

  // A signal aborts the rebuild in progress, which drops its schema and consumer group before main returns. A second
  // signal a second or more later exits at once (Ctrl-C reaches npm, tsx and node alike, and tsx relays it once more).
  const aborter = new AbortController();
  let signalledAt = 0;
  let signalled: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalledAt && Date.now() - signalledAt >= 1_000) {
      process.stderr.write(`\nreplay: ${signal} again: exiting without cleaning up (the next replay drops what is left)\n`);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    if (signalledAt) return;
    signalledAt = Date.now();
    signalled = signal;
    aborter.abort(new RebuildError(`interrupted by ${signal}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const results: string[] = [];
  const display = process.stderr.isTTY ? terminalDisplay(selected.map((p) => p.name)) : plainDisplay();
  try {
    for (const projection of selected) {
      const started = Date.now();
      const { schema } = await rebuildProjection({ kafka, codec, db, pool, namespace: config.LEDGER_NAMESPACE, logger }, projection, {
        swap: !values['no-swap'],
        timeoutMs: timeoutSeconds * 1000,
        signal: aborter.signal,
        onProgress: (progress) => display.progress(projection.name, progress),
        onNotice: (line) => display.note(`replay: ${line}`),
      });
      display.done(projection.name);
      results.push(`${projection.name}: rebuilt into ${schema} in ${Date.now() - started} ms`);
    }
    display.stop();
    for (const line of results) console.log(line);
    return 0;
  } catch (error) {
    display.stop();
    if (error instanceof RebuildError) {
      const what = aborter.signal.aborted
        ? `${error.message}; dropped the unfinished rebuild schema and its consumer group`
        : error.message;
      console.error(`replay: ${what}`);
      if (signalled) return signalled === 'SIGINT' ? 130 : 143;
      return 1;
    }
    console.error('replay: failed (the unfinished rebuild schema was dropped):', error);
    return 1;
  } finally {
    display.stop();
    await Promise.all([db.destroy(), pool.end()]);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('replay:', error);
    process.exit(1);
  },
);
