import { parentPort } from 'node:worker_threads';
import { RecentlyUsed } from '../../ledger/recently-used.ts';

// Run by thread-boot.unit.spec.ts as a worker thread's module: answers what it could use and what Node loaded for it.
const recent = new RecentlyUsed<number>(1);
recent.set('typed', 1);
// Node's own list of the internal modules loaded in this isolate (not in its types); amaro is the type stripper itself
// (its WebAssembly and the source text holding it).
const loaded = (process as unknown as { moduleLoadList: string[] }).moduleLoadList;
const strippers = loaded.filter((name) => name.includes('amaro'));
parentPort?.postMessage({ used: recent.get('typed'), strippers });
