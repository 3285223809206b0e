// Detached child processes with pid files, readiness polling and graceful stop.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

export type Log = (msg: string) => void;

export const runDir = (stackDir: string): string => path.join(stackDir, 'run');
export const logsDir = (stackDir: string): string => path.join(stackDir, 'logs');
export const pidFile = (stackDir: string, name: string): string => path.join(runDir(stackDir), `${name}.pid`);

export function envPort(name: string, fallback: number): number {
  const raw = process.env[name];
  if (!raw) return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`${name}=${raw} is not a valid port`);
  return port;
}

/** Linux: a zombie still answers kill(0), so look at /proc; elsewhere trust kill(0). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

function cmdlineMatches(pid: number, marker: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
  } catch {
    return true; // no /proc (macOS): cannot tell, trust the pid file
  }
}

/** Pid from the pid file if that process is alive and looks like ours; stale files are removed. */
export function livePid(stackDir: string, name: string, marker: string): number | undefined {
  const file = pidFile(stackDir, name);
  let pid: number;
  try {
    pid = Number(fs.readFileSync(file, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && cmdlineMatches(pid, marker)) return pid;
  fs.rmSync(file, { force: true });
  return undefined;
}

export type DetachedSpec = {
  stackDir: string;
  name: string;
  command: string;
  args: string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  uid?: number;
  gid?: number;
};

/** Starts in its own process group with stdio on a log file, so it outlives (and never blocks) the caller. */
export function spawnDetached(spec: DetachedSpec): number {
  fs.mkdirSync(runDir(spec.stackDir), { recursive: true });
  fs.mkdirSync(path.dirname(spec.logFile), { recursive: true });
  const fd = fs.openSync(spec.logFile, 'a');
  try {
    const shown = spec.args.map((a) => (a.length > 120 ? `${a.slice(0, 60)}...(${a.length} chars)` : a)); // e.g. classpath
    fs.writeSync(fd, `\n=== ${new Date().toISOString()} starting ${spec.command} ${shown.join(' ')}\n`);
    const child = spawn(spec.command, spec.args, {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: spec.env ?? process.env,
      cwd: spec.cwd,
      uid: spec.uid,
      gid: spec.gid,
    });
    child.on('error', () => undefined); // surfaced by the readiness check via the log file
    child.unref();
    if (child.pid === undefined) throw new Error(`failed to spawn ${spec.command} (see ${spec.logFile})`);
    fs.writeFileSync(pidFile(spec.stackDir, spec.name), `${child.pid}\n`);
    return child.pid;
  } finally {
    fs.closeSync(fd);
  }
}

function signal(pid: number, sig: NodeJS.Signals, group: boolean): void {
  try {
    process.kill(group ? -pid : pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

/** Signal (the group, or just the leader), wait, SIGKILL the whole group after the timeout; removes the pid file. */
export async function stopProcess(
  stackDir: string,
  name: string,
  marker: string,
  opts: { signal?: NodeJS.Signals; timeoutMs?: number; leaderOnly?: boolean } = {},
): Promise<number | undefined> {
  const pid = livePid(stackDir, name, marker);
  if (pid !== undefined) {
    signal(pid, opts.signal ?? 'SIGTERM', !opts.leaderOnly);
    const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
    while (isAlive(pid) && Date.now() < deadline) await delay(100);
    if (isAlive(pid)) {
      signal(pid, 'SIGKILL', true);
      while (isAlive(pid)) await delay(50);
    }
  }
  fs.rmSync(pidFile(stackDir, name), { force: true });
  return pid;
}

export function portOpen(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Ports nobody listens on right now, all distinct: each is held until every one is found. */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, host, resolve);
      });
    }
    return servers.map((server) => (server.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

export async function httpOk(url: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

export function tail(file: string, lines = 12): string {
  try {
    const last = fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines);
    return last.map((l) => (l.length > 300 ? `${l.slice(0, 300)}...` : l)).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Polls `check` until true; fails early if `pid` dies, and points at the log file either way. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  opts: { timeoutMs: number; intervalMs?: number; pid?: number; logFiles?: string[] },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  const logHint = (): string =>
    (opts.logFiles ?? [])
      .filter((f) => fs.existsSync(f))
      .map((f) => `\n--- see ${f}; last lines:\n${tail(f)}`)
      .join('');
  for (;;) {
    if (await check()) return;
    if (opts.pid !== undefined && !isAlive(opts.pid)) throw new Error(`${what}: process ${opts.pid} exited${logHint()}`);
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${opts.timeoutMs / 1000}s${logHint()}`);
    await delay(opts.intervalMs ?? 250);
  }
}

/** Cross-process mutex (ensure/stop from several terminals or test workers). */
export async function withLock<T>(stackDir: string, fn: () => Promise<T>): Promise<T> {
  const file = path.join(runDir(stackDir), 'stack.lock');
  fs.mkdirSync(runDir(stackDir), { recursive: true });
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch {
        continue; // released meanwhile
      }
      const holder = Number(text);
      const mtime = fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0;
      const justCreated = text === '' && Date.now() - mtime < 5000; // holder has not written its pid yet
      if (!justCreated && (!holder || !isAlive(holder))) {
        fs.rmSync(file, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`stack lock ${file} held by pid ${holder}`, { cause: err });
      await delay(200);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}
