import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export type BaselineProcess = { url: string; database: string; pid: number; close: () => Promise<void> };

/**
 * Starts a baseline server (bench/baseline-server.ts) in a process of its own, as the service runs in one: its CPU is
 * read from /proc by its pid (the `baseline` column), and it does not share the load generator's event loop.
 */
export async function startBaselineProcess(
  kind: 'products' | 'webhook-outbox',
  postgresServerUrl: string,
  secret = '',
): Promise<BaselineProcess> {
  const script = fileURLToPath(new URL('./baseline-server.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, kind, postgresServerUrl, secret], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`the ${kind} baseline exited with ${code} before it listened`);
  });
  const lines = createInterface({ input: child.stdout! });
  const first = (async () => {
    for await (const line of lines) return JSON.parse(line) as { url: string; database: string };
    throw new Error(`the ${kind} baseline closed its output before it listened`);
  })();
  const { url, database } = await Promise.race([first, exited]);
  exited.catch(() => undefined);
  return {
    url,
    database,
    pid: child.pid!,
    close: async () => {
      const gone = once(child, 'exit');
      child.kill('SIGTERM');
      await gone;
    },
  };
}
