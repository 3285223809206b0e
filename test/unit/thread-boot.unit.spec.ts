import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { strippedSources } from '../../ledger/stripped-sources.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const url = (file: string) => pathToFileURL(resolve(ROOT, file)).href;
const PROBE = url('test/support/thread-boot-probe.ts');

/** Starts a worker thread as the processor thread is started, in a node of its own, and returns what its module answered. */
function runThread(withSources: boolean): { used: number; strippers: string[] } {
  const program = `
    import { Worker } from 'node:worker_threads';
    import { strippedSources } from ${JSON.stringify(url('ledger/stripped-sources.ts'))};
    const entry = ${JSON.stringify(PROBE)};
    const sources = ${withSources} ? strippedSources([entry]) : undefined;
    const worker = new Worker(new URL(${JSON.stringify(url('ledger/thread-boot.mjs'))}), { workerData: { entry, sources } });
    worker.once('message', (answer) => { process.stdout.write(JSON.stringify(answer)); process.exit(0); });
    worker.once('error', (error) => { console.error(error); process.exit(1); });`;
  const file = join(mkdtempSync(join(tmpdir(), 'thread-boot-')), 'start.mjs');
  writeFileSync(file, program);
  const run = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: 'utf8' });
  rmSync(dirname(file), { recursive: true, force: true });
  expect(run.status, run.stderr).toBe(0);
  // The warning Node gives at the API's first use is not passed on.
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout) as { used: number; strippers: string[] };
}

describe("a worker thread's TypeScript stripped by the main thread", () => {
  it('runs the modules it is given without loading Node’s type stripper', () => {
    expect(runThread(true)).toEqual({ used: 1, strippers: [] });
  });

  it('loads the type stripper when not given them (what the thread is spared)', () => {
    const answer = runThread(false);
    expect(answer.used).toBe(1);
    expect(answer.strippers.length).toBeGreaterThan(0);
  });

  it("gives every module of the processor thread's graph, types blanked in place, and nothing of the HTTP edge", () => {
    const entry = url('ledger/processor-thread.ts');
    const sources = strippedSources([entry, url('bin/processor-modules.ts')]);
    const files = Object.keys(sources).map((href) => fileURLToPath(href).slice(ROOT.length + 1));
    expect(files).toEqual(
      expect.arrayContaining(['ledger/processor-thread.ts', 'ledger/snapshot-store.ts', 'commands/index.ts', 'consumers/index.ts']),
    );
    expect(files.filter((file) => file.startsWith('http/'))).toEqual([]);
    const thread = sources[entry] ?? '';
    expect(thread).not.toMatch(/import type|: ThreadData/);
    // Blanks, not removals: every line where it was, so a stack trace names the same line.
    const original = readFileSync(fileURLToPath(entry), 'utf8');
    expect(thread.split('\n').map((line) => line.length)).toEqual(original.split('\n').map((line) => line.length));
  });
});
