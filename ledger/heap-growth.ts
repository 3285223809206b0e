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

/**
 * The V8 flags every launch of the service gives node (`npm start`, the Dockerfile's CMD, the tests' and benches'
 * service processes; a unit test keeps them the same): they bound the heaps from the start, which V8 13 (Node 24) only
 * takes on the command line. `--heap-growing-percent` is HEAP_GROWTH_PERCENT's default; `--max-semi-space-size` caps
 * the main thread's young generation (V8 sizes it from the machine's memory otherwise; the processor thread's is set
 * apart, below). Why: a 100 000-item import peaked at 1 123–1 153 MB without them and at 859–880 MB with them,
 * alternately in one hour, 56.4–57.6 s against 55.5–59.8 s; semi-spaces of 16 MB on the main thread, 32 on the
 * processor thread: the job's phase 30 MB lower than 32 on both, product writes' CPU the same (docs/decisions.md,
 * "Memory of a bulk import (issue 29)").
 */
export const LAUNCH_V8_FLAGS = ['--heap-growing-percent=100', '--max-semi-space-size=16'] as const;

/**
 * Every flag a launch of the service gives node, before its entry point: the V8 flags above, then the preload that has
 * the main thread's TypeScript stripped by a thread of its own (`ledger/main-boot.mjs`, relative to the service's
 * directory, where every launch runs). Why: Node's type stripper held about 18 MB of the process (its source text, code
 * and WebAssembly memory) for the process's life, its heap share counted twice under the heap growth bound
 * (docs/decisions.md, "The main thread's TypeScript stripped apart").
 */
export const LAUNCH_NODE_FLAGS = [...LAUNCH_V8_FLAGS, '--import=./ledger/main-boot.mjs'] as const;

/**
 * The processor thread's semi-spaces, in MB: twice the main thread's. Its isolate is made after the main one, so V8's
 * flag set just before it starts sizes it alone (a Worker's `resourceLimits` young generation is overridden by the
 * command line's flag). Why: 16 MB there cost 5–7 % more CPU per product write (its commands' short-lived objects
 * promoted early), 16 MB on the main thread nothing measurable.
 */
export const PROCESSOR_SEMI_SPACE_MB = 32;

/** Sizes the young generation of the isolates made from now on (the processor thread's): call it just before it starts. */
export function sizeProcessorYoungGeneration(): void {
  setFlagsFromString(`--max-semi-space-size=${PROCESSOR_SEMI_SPACE_MB}`);
}

/** The major version of the V8 the process runs on. */
export const v8Major = (): number => Number(process.versions.v8.split('.')[0]);

/**
 * The environment every launch of the service gives node (`npm start`, the Dockerfile, the tests' and benches' service
 * processes; a unit test keeps them the same): glibc's malloc with fixed thresholds, so a buffer of 64 kB or more is
 * mapped on its own and unmapped when freed, and free memory at the top of a heap is given back past 128 kB. Why: by
 * default glibc raises both thresholds to the largest block freed so far (the POST of a bulk import frees blocks of
 * megabytes), after which freed buffers stayed in its arenas: a 100 000-item import ended with 600–630 MB anonymous
 * memory for 50–100 MB of buffers; with these, 481–485 MB (docs/decisions.md, "Memory of a bulk import (issue 29)").
 * Where node's libc is not glibc (Alpine's musl) the variable is ignored.
 */
export const LAUNCH_ENV = {
  GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=131072:glibc.malloc.mmap_threshold=65536',
} as const;
