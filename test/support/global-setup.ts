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
 * the one that runs already. What this run started, it stops again, leaving the machine as it was.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const wasUp = Object.values(await stackStatus()).every((component) => component.up);
  const stack = await ensureStack({ log });
  project.provide('stack', stack);
  return async () => {
    if (!wasUp) await stopStack({ log });
  };
}
