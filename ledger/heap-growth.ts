import { setFlagsFromString } from 'node:v8';

/**
 * Bounds how far V8 lets each heap of the process (the main thread's and the processor thread's) grow past what was
 * live at its last full collection: the next full collection starts at `percent` % more (V8's
 * `--heap-growing-percent`; 0 keeps V8's own factor, which goes up to 4× when collections look cheap). V8's flags are
 * the process's, so one call before the processor thread starts covers both; V8 reads it each time it sets a limit.
 * Why: under a bulk import most of each heap was garbage waiting for a limit set at up to 4× its live size
 * (docs/decisions.md, "Memory of a bulk import (issue 29)").
 */
export function boundHeapGrowth(percent: number): boolean {
  // V8 13 (Node 24) did not keep the bound: in the churn of heap-growth.unit.spec.ts the flag set at run time left the
  // peak near 300 MB (unbounded: 190–440 MB, noisy) where V8 11 and 12 (Node 20, 22) stay near 150 MB. Left to V8 there.
  if (v8Major() >= 13) return false;
  // 0 is V8's own default too: set either way, so a later call in the same process (tests) can undo an earlier one.
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  return true;
}

/** The major version of the V8 the process runs on. */
export const v8Major = (): number => Number(process.versions.v8.split('.')[0]);
