// A worker thread runs the thread's own module (ledger/thread-part.ts). Given its modules' JavaScript (`sources`, made by
// the main thread: ledger/stripped-sources.ts), it loads them as they are given and never loads Node's type stripper;
// any other TypeScript module Node strips as it does the main thread's; where Node's type stripping is off, the
// TypeScript loader tsx is registered first.
import { registerHooks } from 'node:module';
import process from 'node:process';
import { workerData } from 'node:worker_threads';

const sources = workerData.sources;
if (sources)
  registerHooks({
    load(url, context, nextLoad) {
      const source = sources[url];
      if (source === undefined) return nextLoad(url, context);
      // A module is loaded once: its text is not kept past that.
      delete sources[url];
      return { format: 'module', source, shortCircuit: true };
    },
  });
if (!process.features.typescript) (await import('tsx/esm/api')).register();
await import(workerData.entry);
