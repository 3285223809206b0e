import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quietKafka } from '../../ledger/kafka.ts';
import pg from 'pg';
import { withDatabase } from '../../ledger/database.ts';
import { LAUNCH_ENV, LAUNCH_NODE_FLAGS } from '../../ledger/heap-growth.ts';
import type { StackInfo } from '../../stack/stack.ts';
import { DEFAULT_WORKSPACE_SECRET } from '../../stack/unified/stand-in.ts';
import { serviceStarted } from './checked-responses.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const TEST_DEV_SECRET = 'commerce-ledger-test-secret-0123456789';

/** `env` overrides the test defaults; an empty string unsets a variable. */
export type ServiceOptions = { namespace?: string; database?: string; env?: Record<string, string> };

export type Service = {
  baseUrl: string;
  namespace: string;
  databaseUrl: string;
  env: Record<string, string>;
  /** Graceful stop (SIGTERM). */
  stop: () => Promise<void>;
  /** Crash (SIGKILL): nothing gets a chance to flush. */
  kill: () => Promise<void>;
  /** Stops it and removes what it left on the shared stack (its topics and database), so a long run does not pile them up. */
  discard: () => Promise<void>;
  restart: () => Promise<void>;
  /** The pid of the running service process (it changes on restart); undefined before the first start. */
  pid: () => number | undefined;
};

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

const logSize = (path: string): number => (existsSync(path) ? statSync(path).size : 0);

/** The end of a log file (from byte `from` on), for an error message. */
function logTail(path: string, from = 0, lines = 40): string {
  if (!existsSync(path)) return '(no log)';
  return readFileSync(path).subarray(from).toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** The test services' state stores (STATE_DIR), beside the stack's other runtime files. */
const stateDir = join(root, '.stack', 'state');
mkdirSync(stateDir, { recursive: true });

/** A test service's topics, database and state store, once it has stopped: best effort, as a cleanup may find the stack busy. */
export async function removeLeftovers(brokers: string, namespace: string, databaseUrl: string): Promise<void> {
  for (const entry of readdirSync(stateDir, { withFileTypes: true }))
    if (entry.name.startsWith(`${namespace}-`)) rmSync(join(stateDir, entry.name), { recursive: true, force: true });
  const admin = quietKafka(brokers.split(','), 'test-cleanup').admin();
  try {
    await admin.connect();
    const topics = (await admin.listTopics()).filter((topic) => topic.startsWith(`${namespace}.`));
    if (topics.length > 0) await admin.deleteTopics({ topics });
  } catch {
    // the next run's stack start is not affected by what is left
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  const client = new pg.Client({ connectionString: withDatabase(databaseUrl, 'postgres') });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query(`drop database if exists "${new URL(databaseUrl).pathname.slice(1)}" with (force)`);
  } catch {
    // as above
  } finally {
    await client.end().catch(() => undefined);
  }
}

export const uniqueName = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

/** A database name, a topic namespace and a port of its own: each test file gets a service no other file touches. */
export async function startServiceProcess(stack: StackInfo, options: ServiceOptions = {}): Promise<Service> {
  const namespace = options.namespace ?? uniqueName('t');
  const database = options.database ?? `cl_${namespace.replace(/-/g, '_')}`;
  const databaseUrl = withDatabase(stack.postgresServerUrl, database);
  let port = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    // As npm start and the image launch it.
    ...LAUNCH_ENV,
    PORT: String(port),
    HOST: '127.0.0.1',
    KAFKA_BROKERS: stack.kafkaBrokers.join(','),
    SCHEMA_REGISTRY_URL: stack.schemaRegistryUrl,
    DATABASE_URL: databaseUrl,
    LEDGER_NAMESPACE: namespace,
    TOPIC_PARTITIONS: '3',
    AUTH_DEV_SECRET: TEST_DEV_SECRET,
    UNIFIED_WORKSPACE_SECRET: DEFAULT_WORKSPACE_SECRET,
    LOG_LEVEL: 'warn',
    STATE_DIR: stateDir,
    ...options.env,
  };
  // An empty value in options.env removes the variable.
  for (const [key, value] of Object.entries(env)) if (value === '') delete env[key];
  let baseUrl = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const logDir = join(root, '.stack', 'logs', 'test-services');
  mkdirSync(logDir, { recursive: true });
  const logPath = join(logDir, `${namespace}.log`);

  const launch = async () => {
    // A restart must be answered by the new process, never by a survivor of the old one.
    if (
      await fetch(`${baseUrl}/health`).then(
        () => true,
        () => false,
      )
    )
      throw new Error(`${baseUrl} is still served by an earlier process`);
    const log = createWriteStream(logPath, { flags: 'a' });
    // One process, node itself running the TypeScript (it strips the types): no loader, no child a SIGKILL would leave running.
    // SERVICE_NODE_ARGS: node flags for the service alone (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile a bench).
    // The service's own launch flags first (as npm start and the image give them); SERVICE_NODE_ARGS after, so they win.
    const nodeArgs = [...LAUNCH_NODE_FLAGS, ...(process.env.SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
    child = spawn(process.execPath, [...nodeArgs, join(root, 'bin', 'server.ts')], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    const started = child;
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      if (started.exitCode !== null) {
        await new Promise((resolve) => setTimeout(resolve, 100)); // the log stream's last lines
        throw new Error(`service exited with ${started.exitCode}; see ${logPath}; its last lines:\n${logTail(logPath)}`);
      }
      const ok = await fetch(`${baseUrl}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`service did not become healthy; see ${logPath}; its last lines:\n${logTail(logPath)}`);
  };

  const terminate = async (signal: NodeJS.Signals) => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(signal);
    await exited;
  };

  // The port was free when picked, but another process (a test service or broker started alongside) may take it first.
  for (let attempt = 1; ; attempt++) {
    const tried = logSize(logPath);
    try {
      await launch();
      break;
    } catch (error) {
      // Before the first start, whatever answers on the port (or holds it) is some other process.
      const taken = String((error as Error).message).includes('still served') || logTail(logPath, tried).includes('EADDRINUSE');
      if (attempt === 3 || !taken) throw error;
      port = await freePort();
      env.PORT = String(port);
      baseUrl = `http://127.0.0.1:${port}`;
    }
  }
  await serviceStarted(baseUrl);
  return {
    baseUrl,
    namespace,
    databaseUrl,
    env,
    stop: () => terminate('SIGTERM'),
    kill: () => terminate('SIGKILL'),
    discard: async () => {
      await terminate('SIGTERM');
      await removeLeftovers(env.KAFKA_BROKERS ?? '', namespace, databaseUrl);
    },
    restart: launch,
    pid: () => child?.pid,
  };
}
