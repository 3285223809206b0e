// The thread ledger/stripped-hooks.mjs starts to strip a graph of TypeScript modules: Node's type stripper is loaded
// here, in an isolate that ends once it has posted the sources.
import { parentPort, workerData } from 'node:worker_threads';

const { strippedSources } = await import('./stripped-sources.ts');
parentPort.postMessage(strippedSources(workerData.entries));
