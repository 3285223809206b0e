// A worker thread does not inherit the TypeScript loader the process was started with (`--import tsx`): register it,
// then load the thread's own module (ledger/thread-part.ts).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
