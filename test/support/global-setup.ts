import type { TestProject } from 'vitest/node';
import { ensureStack, stackStatus, stopStack, type StackInfo } from '../../stack/stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    stack: StackInfo;
  }
}

const log = (message: string) => console.log(`[stack] ${message}`);

/**
 * Starts the real local stack (Kafka, schema registry, Postgres) once for the whole run, or reuses
 * the one that runs already. When this run had to start the stack, it stops it again afterwards,
 * leaving the machine as it was; a stack that was already running (even in part) is left running.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const before = await stackStatus();
  const startedHere = !before.kafka?.up && !before.registry?.up;
  const stack = await ensureStack({ log });
  project.provide('stack', stack);
  return async () => {
    if (startedHere) await stopStack({ log });
  };
}
