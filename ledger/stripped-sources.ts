import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';

/** A relative import of a TypeScript module in JavaScript: `from './x.ts'`, `import './x.ts'`, `import('./x.ts')`. */
const RELATIVE_IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+\.ts)['"]/g;

/**
 * The JavaScript of each TypeScript module `entries` import, directly or through others, by URL: each file with its
 * types replaced by blanks, as Node's own type stripping does (so lines and columns stay where they were). Made by a
 * short-lived thread (ledger/stripped-hooks.mjs) for the main thread and the processor thread: given these, neither
 * loads Node's type stripper, which holds about 18 MB of a process for its life (its source text in the heap, its code
 * and its WebAssembly memory).
 */
export function strippedSources(entries: readonly string[]): Record<string, string> {
  const sources: Record<string, string> = {};
  const pending = [...entries];
  for (let url = pending.pop(); url !== undefined; url = pending.pop()) {
    if (url in sources || !url.startsWith('file:') || !url.endsWith('.ts')) continue;
    let text: string;
    try {
      text = readFileSync(new URL(url), 'utf8');
    } catch {
      // Text that only looks like an import (in a string, say): the thread's own loader answers for it if it is one.
      continue;
    }
    const source = quietly(() => stripTypeScriptTypes(text, { mode: 'strip' }));
    sources[url] = source;
    for (const [, specifier] of source.matchAll(RELATIVE_IMPORT)) if (specifier) pending.push(new URL(specifier, url).href);
  }
  return sources;
}

/**
 * `make` without the one warning Node gives at the first use of `stripTypeScriptTypes` (an experimental API in Node 22
 * and 24, the very function Node strips every module with).
 */
function quietly<T>(make: () => T): T {
  const emitWarning = process.emitWarning;
  process.emitWarning = () => undefined;
  try {
    return make();
  } finally {
    process.emitWarning = emitWarning;
  }
}
