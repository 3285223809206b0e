import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { withDatabase } from '../../ledger/database.ts';
import { npmStart } from '../support/npm-start.ts';
import { freePort, removeLeftovers, TEST_DEV_SECRET, uniqueName } from '../support/service-process.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const stack = inject('stack');
const brokers = stack.kafkaBrokers.join(',');

/** What a service started with these settings printed, and how (and how fast) it ended. */
async function startWith(namespace: string, settings: Record<string, string>) {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    KAFKA_BROKERS: brokers,
    SCHEMA_REGISTRY_URL: stack.schemaRegistryUrl,
    DATABASE_URL: withDatabase(stack.postgresServerUrl, `cl_${namespace.replace(/-/g, '_')}`),
    LEDGER_NAMESPACE: namespace,
    AUTH_DEV_SECRET: TEST_DEV_SECRET,
    LOG_LEVEL: 'warn',
    ...settings,
  };
  const startedAt = Date.now();
  const child = spawn(process.execPath, [join(root, 'bin', 'server.ts')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  return { code, stdout, stderr, ms: Date.now() - startedAt };
}

const leftovers: { namespace: string; databaseUrl: string }[] = [];
afterAll(async () => {
  for (const { namespace, databaseUrl } of leftovers) await removeLeftovers(brokers, namespace, databaseUrl);
});

describe('bad configuration at start-up', () => {
  it.each([
    {
      name: 'garbage KAFKA_BROKERS',
      settings: async () => ({ KAFKA_BROKERS: 'garbage' }),
      line: () => /^cannot start: invalid configuration: KAFKA_BROKERS="garbage": expected a comma-separated list of host:port/,
    },
    {
      name: 'garbage DATABASE_URL',
      settings: async () => ({ DATABASE_URL: 'garbage' }),
      line: () => /^cannot start: invalid configuration: DATABASE_URL="garbage": expected a URL/,
    },
    {
      name: 'Kafka on a closed port',
      settings: async () => ({ KAFKA_BROKERS: `127.0.0.1:${await freePort()}` }),
      line: (s: Record<string, string>) =>
        new RegExp(`^cannot start: cannot reach Kafka at ${s.KAFKA_BROKERS} \\(KAFKA_BROKERS\\): .*ECONNREFUSED`),
    },
    {
      name: 'the schema registry on a closed port',
      settings: async () => ({ SCHEMA_REGISTRY_URL: `http://127.0.0.1:${await freePort()}/apis/ccompat/v7` }),
      line: (s: Record<string, string>) =>
        new RegExp(`^cannot start: cannot reach the schema registry at ${s.SCHEMA_REGISTRY_URL} \\(SCHEMA_REGISTRY_URL\\): .*ECONNREFUSED`),
    },
    {
      name: 'Postgres on a closed port',
      settings: async () => ({ DATABASE_URL: `postgres://postgres:hunter2@127.0.0.1:${await freePort()}/cl_closed` }),
      line: (s: Record<string, string>) =>
        new RegExp(
          `^cannot start: cannot reach Postgres at ${s.DATABASE_URL!.replace('hunter2', '\\*\\*\\*')} \\(DATABASE_URL\\): connect ECONNREFUSED`,
        ),
    },
  ])('$name: exit 1 with one line naming the setting and what was tried, no stack', async ({ settings, line }) => {
    const namespace = uniqueName('bad');
    const chosen = await settings();
    const result = await startWith(namespace, chosen);
    // What a start that got as far as Kafka made: its topics (and, in no case here, a database of its own).
    leftovers.push({ namespace, databaseUrl: withDatabase(stack.postgresServerUrl, `cl_${namespace.replace(/-/g, '_')}`) });
    const report = `exit ${result.code} after ${result.ms} ms\n--- stderr\n${result.stderr}\n--- stdout\n${result.stdout}`;
    expect(result.code, report).toBe(1);
    expect(result.ms, report).toBeLessThan(40_000);
    const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines, report).toHaveLength(1);
    expect(lines[0], report).toMatch(line(chosen));
    expect(`${result.stderr}${result.stdout}`, report).not.toMatch(/\n\s+at |Error:|hunter2/);
  });

  it('npm start checks the settings before the stack: garbage DATABASE_URL is the same one line', async () => {
    const startedAt = Date.now();
    const start = npmStart({ DATABASE_URL: 'garbage', PORT: String(await freePort()) });
    // npm's process group, not npm alone: a script still running would otherwise hold the pipes open past npm's death.
    const timer = setTimeout(() => void start.stop(), 60_000);
    const code = await start.exited;
    clearTimeout(timer);
    const output = start.output();
    const report = `exit ${code} after ${Date.now() - startedAt} ms\n${output}`;
    expect(code, report).toBe(1);
    expect(output, report).toMatch(/^cannot start: invalid configuration: DATABASE_URL="garbage": expected a URL/m);
    expect(output, report).not.toMatch(/\n\s+at |TypeError/);
  });
});
