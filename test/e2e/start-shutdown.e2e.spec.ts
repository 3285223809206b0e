import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { withDatabase } from '../../ledger/database.ts';
import { freePort, removeLeftovers, uniqueName } from '../support/service-process.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const stack = inject('stack');

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** The pids of a process group, from /proc (Linux): what `npm start` started, whoever their parent is now. */
/** Whether a process runs: it exists and is not a zombie (exited, not yet reaped). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so read after the last ')'.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') members.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

const until = async (condition: () => Promise<boolean> | boolean, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return condition();
};

let started: { npm: ChildProcess; namespace: string; databaseUrl: string } | undefined;

afterEach(async () => {
  if (!started) return;
  const { npm, namespace, databaseUrl } = started;
  started = undefined;
  // Whatever a failed run left: the whole group goes.
  if (npm.pid && groupMembers(npm.pid).length > 0) process.kill(-npm.pid, 'SIGKILL');
  await removeLeftovers(stack.kafkaBrokers.join(','), namespace, databaseUrl);
});

describe('npm start and signals', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to the npm process stops the service and everything npm start started within a few seconds',
    async (signal) => {
      const port = await freePort();
      const standInPort = await freePort();
      const namespace = uniqueName('start');
      const databaseUrl = withDatabase(stack.postgresServerUrl, `cl_${namespace.replace(/-/g, '_')}`);
      const env: Record<string, string> = {
        ...(process.env as Record<string, string>),
        PORT: String(port),
        HOST: '127.0.0.1',
        UNIFIED_STAND_IN_PORT: String(standInPort),
        KAFKA_BROKERS: stack.kafkaBrokers.join(','),
        SCHEMA_REGISTRY_URL: stack.schemaRegistryUrl,
        DATABASE_URL: databaseUrl,
        LEDGER_NAMESPACE: namespace,
        LOG_LEVEL: 'warn',
        // Where the test services keep theirs, removed with the rest of what the test leaves.
        STATE_DIR: join(root, '.stack', 'state'),
      };
      delete env.UNIFIED_API_URL; // so that npm start starts the stand-in too
      // A process group of its own, as `npm start &` in a shell gets: what is left of it afterwards is what leaked.
      const npm = spawn('npm', ['start'], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      started = { npm, namespace, databaseUrl };
      let output = '';
      npm.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      npm.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
      const pgid = npm.pid!;

      const healthy = await until(
        () =>
          fetch(`http://127.0.0.1:${port}/health`).then(
            (response) => response.ok,
            () => false,
          ),
        120_000,
      );
      expect(healthy, output).toBe(true);
      expect(await listening(standInPort)).toBe(true);
      const before = groupMembers(pgid);
      expect(before.length).toBeGreaterThan(1); // npm and node at least

      const signalledAt = Date.now();
      process.kill(pgid, signal); // the npm process alone, as `kill $!` after `npm start &`

      expect(await until(async () => !(await listening(port)) && !(await listening(standInPort)), 10_000), output).toBe(true);
      expect(await until(() => groupMembers(pgid).length === 0, 10_000), `left: ${groupMembers(pgid).join(', ')}\n${output}`).toBe(true);
      expect(Date.now() - signalledAt).toBeLessThan(10_000);
      await exited;
      // A process that exited is gone even while its parent has not reaped it yet (a zombie still answers kill 0).
      for (const pid of before) expect(alive(pid), `pid ${pid}`).toBe(false);
      expect(output).not.toMatch(/again: exiting without waiting/);
    },
  );
});
