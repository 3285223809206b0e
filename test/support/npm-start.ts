import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** How long a stopped `npm start` may drain before its process group is killed. */
const STOP_GRACE_MS = 20_000;

export type NpmStart = {
  /** stdout and stderr so far, interleaved. */
  output: () => string;
  /** Its exit code, once npm has exited. */
  exited: Promise<number | null>;
  /** SIGTERM to its process group, SIGKILL after a grace period; resolves once npm has exited. */
  stop: () => Promise<void>;
};

/**
 * `npm start` as a user runs it from the repository, with `env` on top of this process's environment (an empty value
 * unsets a variable), in a process group of its own as `npm start &` in a shell gets.
 */
export function npmStart(env: Record<string, string>): NpmStart {
  const merged: Record<string, string> = { ...(process.env as Record<string, string>), ...env };
  for (const [key, value] of Object.entries(merged)) if (value === '') delete merged[key];
  const child = spawn('npm', ['start'], { cwd: root, env: merged, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // the group is gone
    }
  };
  return {
    output: () => output,
    exited,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Whether `GET url` answers 200 within `ms`, asked every 250 ms (or until `gaveUp` settles: the process exited). */
export async function answers200(url: string, ms: number, gaveUp?: Promise<unknown>): Promise<boolean> {
  let over = false;
  void gaveUp?.then(() => (over = true));
  const deadline = Date.now() + ms;
  while (!over && Date.now() < deadline) {
    const ok = await fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ok) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}
