import { RecentlyUsed } from '../../ledger/recently-used.ts';

// Run by main-boot.unit.spec.ts as a process's entry: answers what it could use and whether Node loaded its type
// stripper (amaro, Node's own list of the internal modules loaded in this isolate) for this thread.
const recent = new RecentlyUsed<number>(1);
recent.set('typed', 1);
const loaded = (process as unknown as { moduleLoadList: string[] }).moduleLoadList;
process.stdout.write(JSON.stringify({ used: recent.get('typed'), strippers: loaded.filter((name) => name.includes('amaro')) }));
