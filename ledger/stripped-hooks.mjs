// Plain JavaScript on purpose: run before any TypeScript module of the thread that uses it is loaded, so that Node's
// type stripper is never loaded in that thread (ledger/stripped-sources.ts says why).
import { registerHooks } from 'node:module';
import { URL } from 'node:url';
import { Worker } from 'node:worker_threads';

/** Loads each module of `sources` (JavaScript by file URL) as given; any other module goes to Node's own loader. */
export function serveStripped(sources) {
  registerHooks({
    load(url, context, nextLoad) {
      const source = sources[url];
      if (source === undefined) return nextLoad(url, context);
      // A module is loaded once: its text is not kept past that.
      delete sources[url];
      return { format: 'module', source, shortCircuit: true };
    },
  });
}

/**
 * The stripped sources of the modules `entries` import (ledger/stripped-sources.ts), made by a thread of its own that
 * ends once it has answered: the type stripper's memory goes with it.
 */
export function strippedApart(entries) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./strip-thread.mjs', import.meta.url), { workerData: { entries } });
    worker.once('message', (sources) => {
      resolve(sources);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the type stripper's thread exited with ${code} before answering`)));
  });
}
