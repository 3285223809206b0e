// A worker thread runs the thread's own module (ledger/thread-part.ts). Node (22.18+, 24) strips its types as it does
// the main thread's; where Node's type stripping is off, the TypeScript loader tsx is registered first.
import process from 'node:process';
import { workerData } from 'node:worker_threads';

if (!process.features.typescript) (await import('tsx/esm/api')).register();
await import(workerData.entry);
