import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withDatabase } from '../../ledger/database.ts';
import { answers200, npmStart, type NpmStart } from '../support/npm-start.ts';
import { freePort, removeLeftovers, uniqueName } from '../support/service-process.ts';

// The README's "Several instances": `npm start`, then `PORT=3001 npm start` beside it. Here on free ports, in a namespace
// and database of the test's own, the stand-in on a free port too; the stack is the one the suite runs on.
const stack = inject('stack');
const namespace = uniqueName('instances');
const databaseUrl = withDatabase(stack.postgresServerUrl, `cl_${namespace.replace(/-/g, '_')}`);
const READY_MS = 150_000;

let standInPort: number;
let firstPort: number;
const started: NpmStart[] = [];

/** The README's command with the test's ports, namespace and database; no connection provider configured. */
const start = (settings: Record<string, string>): NpmStart => {
  const instance = npmStart({
    UNIFIED_API_URL: '',
    UNIFIED_STAND_IN_PORT: String(standInPort),
    LEDGER_NAMESPACE: namespace,
    DATABASE_URL: databaseUrl,
    STATE_DIR: join(process.cwd(), '.stack', 'state'),
    LOG_LEVEL: 'warn',
    ...settings,
  });
  started.push(instance);
  return instance;
};

const ready = (port: number, instance: NpmStart) => answers200(`http://127.0.0.1:${port}/health/ready`, READY_MS, instance.exited);

/** A start that must fail: its exit code, its `cannot start:` lines, and whether it printed a stack frame. */
const failedStart = async (settings: Record<string, string>) => {
  const instance = start(settings);
  const code = await instance.exited;
  const output = instance.output();
  return {
    code,
    output,
    lines: output.split('\n').filter((line) => line.startsWith('cannot start:')),
    stackFrames: /^\s+at /m.test(output),
  };
};

beforeAll(async () => {
  standInPort = await freePort();
  firstPort = await freePort();
});

afterAll(async () => {
  await Promise.all(started.map((instance) => instance.stop()));
  await removeLeftovers(stack.kafkaBrokers.join(','), namespace, databaseUrl);
});

describe('several instances started with npm start', () => {
  it('a second `PORT=… npm start` beside the first shares its stand-in, and both get ready', async () => {
    const first = start({ PORT: String(firstPort) });
    expect(await ready(firstPort, first), first.output()).toBe(true);
    const secondPort = await freePort();
    const second = start({ PORT: String(secondPort) });
    expect(await ready(secondPort, second), second.output()).toBe(true);

    expect(await ready(firstPort, first)).toBe(true);
    expect(first.output()).toContain(`the connection provider's stand-in serves http://127.0.0.1:${standInPort}`);
    expect(second.output()).toContain(
      `using the connection provider's stand-in another instance serves on http://127.0.0.1:${standInPort}`,
    );
    expect(`${first.output()}${second.output()}`).not.toMatch(/EADDRINUSE|cannot start/);
  });

  it('a start on the port an instance serves: exit 1 with one "cannot start:" line, no stack trace', async () => {
    const result = await failedStart({ PORT: String(firstPort) });
    expect(result.code, result.output).toBe(1);
    expect(result.lines, result.output).toEqual([
      expect.stringMatching(new RegExp(`^cannot start: cannot listen on 127\\.0\\.0\\.1:${firstPort} \\(HOST, PORT\\): listen EADDRINUSE`)),
    ]);
    expect(result.stackFrames, result.output).toBe(false);
    expect(await ready(firstPort, started[0]!)).toBe(true);
  });

  it('a stand-in port held by another server: exit 1 with one "cannot start:" line naming UNIFIED_STAND_IN_PORT', async () => {
    const other: Server = createServer((_request, response) => response.end('not a stand-in'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherPort = (other.address() as { port: number }).port;
    try {
      const result = await failedStart({ PORT: String(await freePort()), UNIFIED_STAND_IN_PORT: String(otherPort) });
      expect(result.code, result.output).toBe(1);
      expect(result.lines, result.output).toEqual([
        expect.stringMatching(
          new RegExp(
            `^cannot start: the connection provider's stand-in .*127\\.0\\.0\\.1:${otherPort} \\(UNIFIED_STAND_IN_PORT\\) is in use by`,
          ),
        ),
      ]);
      expect(result.stackFrames, result.output).toBe(false);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('a running stand-in that refuses this UNIFIED_API_TOKEN: exit 1 with one "cannot start:" line', async () => {
    const result = await failedStart({ PORT: String(await freePort()), UNIFIED_API_TOKEN: 'another-token' });
    expect(result.code, result.output).toBe(1);
    expect(result.lines, result.output).toEqual([expect.stringMatching(/^cannot start: .*refuses this UNIFIED_API_TOKEN \(401\)/)]);
    expect(result.stackFrames, result.output).toBe(false);
  });
});
