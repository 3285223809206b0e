import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LAUNCH_NODE_FLAGS } from '../../ledger/heap-growth.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** A node launched as the service is (or with its V8 flags alone), running the probe as its entry. */
function launch(flags: readonly string[]): { used: number; strippers: string[] } {
  const run = spawnSync(process.execPath, [...flags, 'test/support/main-boot-probe.ts'], { cwd: ROOT, encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  // Neither the preload nor its stripping thread says anything (the stripping API's warning included).
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout) as { used: number; strippers: string[] };
}

describe("the main thread's TypeScript stripped apart", () => {
  it('runs the entry’s modules without loading Node’s type stripper in the main thread', () => {
    expect(launch(LAUNCH_NODE_FLAGS)).toEqual({ used: 1, strippers: [] });
  });

  it('loads the type stripper without the preload (what the main thread is spared)', () => {
    const flags = LAUNCH_NODE_FLAGS.filter((flag) => !flag.startsWith('--import'));
    const answer = launch(flags);
    expect(answer.used).toBe(1);
    expect(answer.strippers.length).toBeGreaterThan(0);
  });
});
