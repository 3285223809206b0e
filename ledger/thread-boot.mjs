// A worker thread runs the thread's own module (ledger/thread-part.ts). Given its modules' JavaScript (`sources`, made
// apart: ledger/stripped-hooks.mjs), it loads them as they are given and never loads Node's type stripper; any other
// TypeScript module Node strips as it does the main thread's; where Node's type stripping is off, the TypeScript loader
// tsx is registered first.
import process from 'node:process';
import { workerData } from 'node:worker_threads';
import { serveStripped } from './stripped-hooks.mjs';

if (workerData.sources) serveStripped(workerData.sources);
if (!process.features.typescript) (await import('tsx/esm/api')).register();
await import(workerData.entry);
