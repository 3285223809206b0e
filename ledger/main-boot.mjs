// Preloaded by every launch of the service (`--import`, LAUNCH_NODE_FLAGS in ledger/heap-growth.ts): the entry's
// TypeScript modules, stripped by a short-lived thread, are loaded as given, so the main thread never loads Node's type
// stripper (about 18 MB of a process's memory: its source text, code and WebAssembly). A module not given (one no
// relative import names) is stripped by Node as before; where Node does not strip types, nothing is done here.
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { serveStripped, strippedApart } from './stripped-hooks.mjs';

const entry = process.argv[1];
if (process.features.typescript && entry?.endsWith('.ts')) serveStripped(await strippedApart([pathToFileURL(entry).href]));
