import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

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

/** The packages the main thread loads with the service's modules (bin/server.ts imported, not run). */
function packagesAtStart(): string[] {
  const run = spawnSync(
    process.execPath,
    [
      '--import',
      `data:text/javascript,${encodeURIComponent(RECORDER)}`,
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(pathToFileURL(join(ROOT, 'bin', 'server.ts')).href)});`,
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as string[];
}

describe("the main thread's modules at start", () => {
  // Each is several MB of heap for the whole life of a process that may never use it (a bulk import's peak, issue 29).
  it('leaves the libraries of the features used now and then to their first use, and lmdb to the processor thread', () => {
    const loaded = packagesAtStart();
    expect(loaded).toEqual(expect.arrayContaining(['fastify', '@platformatic/kafka', 'pg', 'zod']));
    for (const deferred of ['@aws-sdk/client-s3', '@aws-sdk/lib-storage', 'nodemailer', 'undici', 'lmdb']) {
      expect(loaded, `${deferred} is loaded at start`).not.toContain(deferred);
    }
  });
});
