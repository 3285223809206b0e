// Local infrastructure for development and tests: Kafka (KRaft), Apicurio schema registry, PostgreSQL, S3Proxy.
// Processes run detached and survive the caller; everything lives under STACK_DIR (default <repo>/.stack).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureKafka, kafkaStatus, stopKafka } from './kafka/kafka.ts';
import { ensurePostgres, postgresStatus, stopPostgres } from './postgres/postgres.ts';
import { envPort, httpOk, livePid, logsDir, spawnDetached, stopProcess, waitUntil, withLock, type Log } from './process-control.ts';
import { configureRegistry, prepareRegistry, registryProcess } from './registry/registry.ts';
import { ensureS3, s3Status, stopS3 } from './s3/s3proxy.ts';

/** `s3Endpoint`: S3Proxy, with the credentials in stack/s3/s3proxy.ts. */
export type StackInfo = { kafkaBrokers: string[]; schemaRegistryUrl: string; postgresServerUrl: string; s3Endpoint: string };

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REGISTRY_READY_TIMEOUT_MS = 180_000;

export const stackDir = (): string => path.resolve(process.env.STACK_DIR ?? path.join(REPO_ROOT, '.stack'));

function registry(kafkaBrokers: string[]): { port: number; url: string; spec: ReturnType<typeof registryProcess> } {
  const port = envPort('SCHEMA_REGISTRY_PORT', 18081);
  const spec = registryProcess({ stackDir: stackDir(), port, kafkaBrokers });
  // Confluent-compatible API of Apicurio Registry 3, which is what the app's serde client speaks.
  return { port, url: `http://127.0.0.1:${port}/apis/ccompat/v7`, spec };
}

async function ensureRegistry(dir: string, kafkaBrokers: string[], log: Log): Promise<string> {
  if (process.env.SCHEMA_REGISTRY_URL) {
    // An external registry gets the same settings as ours: BACKWARD globally and on every subject without a level.
    await configureRegistry(process.env.SCHEMA_REGISTRY_URL);
    log(`registry: external (SCHEMA_REGISTRY_URL=${process.env.SCHEMA_REGISTRY_URL}), compatibility BACKWARD`);
    return process.env.SCHEMA_REGISTRY_URL;
  }
  const { port, url, spec: initialSpec } = registry(kafkaBrokers);
  let spec = initialSpec;
  let pid = livePid(dir, 'registry', registryMarker());
  if (await httpOk(spec.healthUrl)) {
    log(`registry: already running on 127.0.0.1:${port}${pid ? ` (pid ${pid})` : ''}`);
    return url;
  }
  const logFile = path.join(logsDir(dir), 'registry.log');
  if (pid === undefined) {
    await prepareRegistry(dir, log);
    ({ spec } = registry(kafkaBrokers)); // prepare may have produced what the command points at
    log(`registry: starting on 127.0.0.1:${port}`);
    pid = spawnDetached({
      stackDir: dir,
      name: 'registry',
      command: spec.command,
      args: spec.args,
      env: { ...process.env, ...spec.env },
      logFile,
    });
  } else {
    log(`registry: pid ${pid} is starting, waiting`);
  }
  await waitUntil('registry', () => httpOk(spec.healthUrl), {
    timeoutMs: REGISTRY_READY_TIMEOUT_MS,
    intervalMs: 500,
    pid,
    logFiles: [logFile],
  });
  await configureRegistry(url);
  log(`registry: ready on 127.0.0.1:${port}`);
  return url;
}

/** What the registry's /proc cmdline must contain for its pid file to be trusted (Kafka's `java` would match `java`). */
const registryMarker = (): string => 'quarkus-run.jar';

/** Idempotent: reuses whatever is already up, starts the rest and waits until each is really ready. */
export async function ensureStack(opts: { log?: (msg: string) => void } = {}): Promise<StackInfo> {
  const log = opts.log ?? (() => undefined);
  const dir = stackDir();
  return withLock(dir, async () => {
    const kafkaAndRegistry = (async () => {
      const kafkaBrokers = await ensureKafka(dir, log);
      return { kafkaBrokers, schemaRegistryUrl: await ensureRegistry(dir, kafkaBrokers, log) };
    })();
    // allSettled: do not release the lock while the other branch is still starting processes.
    const [kr, pg, s3] = await Promise.allSettled([kafkaAndRegistry, ensurePostgres(dir, log), ensureS3(dir, log)]);
    if (kr.status === 'rejected') throw kr.reason;
    if (pg.status === 'rejected') throw pg.reason;
    if (s3.status === 'rejected') throw s3.reason;
    return { ...kr.value, postgresServerUrl: pg.value, s3Endpoint: s3.value };
  });
}

/** Idempotent: stops only the processes this stack started (per pid file), registry before Kafka. */
export async function stopStack(opts: { log?: (msg: string) => void } = {}): Promise<void> {
  const log = opts.log ?? (() => undefined);
  const dir = stackDir();
  await withLock(dir, async () => {
    const registryPid = await stopProcess(dir, 'registry', registryMarker(), { timeoutMs: 30_000 });
    if (registryPid) log(`registry: stopped pid ${registryPid}`);
    await Promise.all([stopKafka(dir, log), stopPostgres(dir, log), stopS3(dir, log)]);
  });
}

export async function stackStatus(): Promise<Record<string, { up: boolean; detail: string }>> {
  const dir = stackDir();
  const registryStatus = async (): Promise<{ up: boolean; detail: string }> => {
    const external = process.env.SCHEMA_REGISTRY_URL;
    if (external) {
      const up = await httpOk(`${external.replace(/\/$/, '')}/subjects`);
      return { up, detail: `${external} (external)${up ? '' : ' not answering'}` };
    }
    const { url, spec } = registry([]);
    const pid = livePid(dir, 'registry', registryMarker());
    const up = await httpOk(spec.healthUrl);
    return { up, detail: `${url}${pid ? ` pid ${pid}` : ''}${up ? '' : ' not answering'}` };
  };
  const [kafka, registryResult, postgres, s3] = await Promise.all([kafkaStatus(dir), registryStatus(), postgresStatus(dir), s3Status(dir)]);
  return { kafka, registry: registryResult, postgres, s3 };
}
