import { spawn } from 'node:child_process';
import { ensureStack, stackStatus, stopStack } from '../../stack/stack.ts';

/**
 * `tsx test/support/with-stack.ts -- <command…>`: runs the command with the local stack up, starting it first if it was
 * not running and stopping it again afterwards (as each vitest run's global setup would, but once for several runs:
 * `npm test` runs the suite and then `test:node-versions` under one stack). Exits with the command's code.
 */
const log = (message: string) => console.log(`[stack] ${message}`);
const args = process.argv.slice(2);
const command = args[0] === '--' ? args.slice(1) : args;
if (command.length === 0) {
  console.error('usage: tsx test/support/with-stack.ts -- <command…>');
  process.exit(2);
}

const before = await stackStatus();
const startedHere = !before.kafka?.up && !before.registry?.up;
await ensureStack({ log });
const child = spawn(command[0] as string, command.slice(1), { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
const code = await new Promise<number>((resolve) => child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))));
if (startedHere) await stopStack({ log });
process.exit(code);
