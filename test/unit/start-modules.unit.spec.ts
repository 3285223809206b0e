import { spawnSync } from 'node:child_process';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { strippedSources } from '../../ledger/stripped-sources.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Records every module node loads; on exit prints the packages among them. */
const RECORDER = `
import { registerHooks } from 'node:module';
const seen = new Set();
registerHooks({ load(url, context, next) { seen.add(url); return next(url, context); } });
process.on('exit', () => {
  const packages = new Set([...seen].map((url) => url.match(/node_modules\\/((@[^/]+\\/)?[^/]+)\\//)?.[1]).filter(Boolean));
  process.stdout.write(JSON.stringify([...packages]));
});
`;

/** The packages node loads with these modules (imported, not run as a program). */
function packagesLoadedBy(modules: string[]): string[] {
  const imports = modules.map((file) => `await import(${JSON.stringify(pathToFileURL(join(ROOT, file)).href)});`).join('\n');
  const run = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(RECORDER)}`, '--input-type=module', '-e', imports],
    { cwd: ROOT, encoding: 'utf8' },
  );
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as string[];
}

/**
 * What the processor thread loads before it runs: the modules it is given at its start (ledger/stripped-sources.ts),
 * but for its own module, which would start the thread.
 */
function processorThreadModules(): string[] {
  const entry = pathToFileURL(join(ROOT, 'ledger', 'processor-thread.ts')).href;
  const given = strippedSources([entry, pathToFileURL(join(ROOT, 'bin', 'processor-modules.ts')).href]);
  return Object.keys(given)
    .filter((url) => url !== entry)
    .map((url) => relative(ROOT, fileURLToPath(url)));
}

describe("the main thread's modules at start", () => {
  // Each is several MB of heap for the whole life of a process that may never use it (a bulk import's peak, issue 29).
  it('leaves the libraries of the features used now and then to their first use, and lmdb to the processor thread', () => {
    const loaded = packagesLoadedBy([join('bin', 'server.ts')]);
    expect(loaded).toEqual(expect.arrayContaining(['fastify', '@platformatic/kafka', 'pg', 'zod']));
    for (const deferred of ['@aws-sdk/client-s3', '@aws-sdk/lib-storage', 'nodemailer', 'undici', 'lmdb']) {
      expect(loaded, `${deferred} is loaded at start`).not.toContain(deferred);
    }
  });

  it('leaves zod to the main thread: the processor thread gets its settings parsed', () => {
    const modules = processorThreadModules();
    expect(modules).toEqual(expect.arrayContaining([join('ledger', 'config-derived.ts'), join('ledger', 'snapshot-store.ts')]));
    const loaded = packagesLoadedBy(modules);
    expect(loaded).toEqual(expect.arrayContaining(['@platformatic/kafka', 'lmdb', 'avsc']));
    for (const deferred of ['zod', '@aws-sdk/client-s3', 'nodemailer', 'undici', 'fastify']) {
      expect(loaded, `${deferred} is loaded by the processor thread`).not.toContain(deferred);
    }
  });
});
