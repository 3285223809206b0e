import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { backoffDelay, Supervisor, type Part, type PartSignals } from '../../ledger/supervisor.ts';
import { failureKind, ThrottledLog } from '../../ledger/throttled-log.ts';

const silent = pino({ level: 'silent' });
const until = async (condition: () => boolean) => {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
  expect(condition()).toBe(true);
};

/** A part that records its lifecycle and fails its first `failingStarts` restarts. */
const recordingPart = (signals: () => PartSignals, failingStarts = 0) => {
  const calls: string[] = [];
  let starts = 0;
  const part: Part = {
    start: async () => {
      starts++;
      calls.push(`start${starts}`);
      if (starts > 1 && starts <= 1 + failingStarts) throw new Error('broker still down');
      signals().running();
    },
    stop: async () => {
      calls.push('stop');
    },
  };
  return { part, calls };
};

describe('Supervisor', () => {
  const options = { minDelayMs: 1, maxDelayMs: 4, stopTimeoutMs: 50 };

  it('stops a failed part and starts it again', async () => {
    const supervisor = new Supervisor('p', silent, options);
    const { part, calls } = recordingPart(() => supervisor);
    await supervisor.start(part);
    expect(supervisor.status().state).toBe('running');
    supervisor.failed(new Error('crash'));
    await until(() => supervisor.status().restarts === 1);
    expect(calls).toEqual(['start1', 'stop', 'start2']);
    expect(supervisor.status()).toMatchObject({ state: 'running', restarts: 1, lastError: 'crash' });
    await supervisor.stop();
  });

  it('keeps trying with backoff while the part cannot start, stopping what each failed start left behind', async () => {
    const supervisor = new Supervisor('p', silent, options);
    const { part, calls } = recordingPart(() => supervisor, 3);
    await supervisor.start(part);
    supervisor.failed(new Error('crash'));
    await until(() => supervisor.status().restarts === 1);
    expect(calls).toEqual(['start1', 'stop', 'start2', 'stop', 'start3', 'stop', 'start4', 'stop', 'start5']);
    expect(supervisor.status().state).toBe('running');
    await supervisor.stop();
  });

  it('restarts once for a burst of failures of the same incarnation', async () => {
    const supervisor = new Supervisor('p', silent, options);
    const { part, calls } = recordingPart(() => supervisor);
    await supervisor.start(part);
    supervisor.failed(new Error('crash'));
    supervisor.failed(new Error('and its consumer crashed too'));
    await until(() => supervisor.status().restarts === 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toEqual(['start1', 'stop', 'start2']);
    await supervisor.stop();
  });

  it('restarts again when the new incarnation fails while it starts', async () => {
    const supervisor = new Supervisor('p', silent, options);
    let starts = 0;
    const part: Part = {
      start: async () => {
        starts++;
        if (starts === 2) supervisor.failed(new Error('crashed during start'));
        else supervisor.running();
      },
      stop: async () => undefined,
    };
    await supervisor.start(part);
    supervisor.failed(new Error('crash'));
    await until(() => supervisor.status().restarts === 2);
    expect(starts).toBe(3);
    await supervisor.stop();
  });

  it('does nothing after it was stopped', async () => {
    const supervisor = new Supervisor('p', silent, options);
    const { part, calls } = recordingPart(() => supervisor);
    await supervisor.start(part);
    await supervisor.stop();
    supervisor.failed(new Error('late crash event'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toEqual(['start1', 'stop']);
    expect(supervisor.status().state).toBe('stopped');
  });
});

describe('backoffDelay', () => {
  it('doubles from the minimum up to the maximum, with jitter in the upper half', () => {
    expect([0, 1, 2, 3, 10].map((attempt) => backoffDelay(attempt, 200, 5_000, () => 1))).toEqual([200, 400, 800, 1600, 5000]);
    expect([0, 1, 2, 3, 10].map((attempt) => backoffDelay(attempt, 200, 5_000, () => 0))).toEqual([100, 200, 400, 800, 2500]);
  });
});

describe('ThrottledLog', () => {
  it('writes one line per kind per interval and counts what it held back', () => {
    const lines: { fields: Record<string, unknown>; message: string }[] = [];
    const log = { warn: (fields: Record<string, unknown>, message: string) => lines.push({ fields, message }) } as unknown as pino.Logger;
    let now = 0;
    const throttled = new ThrottledLog(log, 10_000, () => now);
    for (let i = 0; i < 5; i++) throttled.write('warn', 'a', {}, 'broker down');
    throttled.write('warn', 'b', {}, 'another kind');
    now = 10_000;
    throttled.write('warn', 'a', {}, 'broker down');
    expect(lines).toEqual([
      { fields: {}, message: 'broker down' },
      { fields: {}, message: 'another kind' },
      { fields: { repeatedSinceLastLine: 4 }, message: 'broker down' },
    ]);
  });

  it('names a failure by its root cause, not by the wrapper kafkajs puts around it', () => {
    const cause = Object.assign(new Error('There is no coordinator'), { name: 'KafkaJSProtocolError', type: 'CONCURRENT_TRANSACTIONS' });
    const wrapped = Object.assign(new Error('retries exceeded'), { name: 'KafkaJSNumberOfRetriesExceeded', cause });
    expect(failureKind(wrapped)).toBe('KafkaJSProtocolError:CONCURRENT_TRANSACTIONS');
  });
});
