import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DependencyMonitor, isRefused } from '../../ledger/dependencies.ts';
import { quietKafka } from '../../ledger/kafka.ts';

const silent = pino({ level: 'silent' });
const until = async (condition: () => boolean) => {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
  expect(condition()).toBe(true);
};

/** A Kafka probe the test steers: answers, or refuses the connection. */
const steered = () => {
  let mode: 'up' | 'refused' = 'up';
  const probe = async () => {
    if (mode === 'refused') throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:19092'), { code: 'ECONNREFUSED' });
  };
  return { probe, set: (next: typeof mode) => (mode = next) };
};

describe('DependencyMonitor (the circuit of the edge)', () => {
  const start = async (kafka: () => Promise<void>) => {
    const changes: string[] = [];
    const monitor = new DependencyMonitor({ kafka, registry: async () => undefined, postgres: async () => undefined }, silent, {
      intervalMs: 1,
      timeoutMs: 5,
    });
    monitor.onChange((name, up) => changes.push(`${name} ${up ? 'up' : 'down'}`));
    await monitor.start();
    return { monitor, changes };
  };

  it('opens at once when the dependency refuses the connection, and closes at its first answer', async () => {
    const kafka = steered();
    const { monitor, changes } = await start(kafka.probe);
    try {
      expect(monitor.isUp('kafka')).toBe(true);
      kafka.set('refused');
      await until(() => !monitor.isUp('kafka'));
      expect(() => monitor.require('postgres', 'kafka')).toThrow('kafka is unavailable');
      kafka.set('up');
      await until(() => monitor.isUp('kafka'));
      expect(changes).toEqual(['kafka down', 'kafka up']);
    } finally {
      await monitor.stop();
    }
  });

  it('keeps a dependency that is only slow to answer up until it misses three probes in a row', async () => {
    // Each probe sees what the previous ones left: the state before the 1st, 2nd, 3rd and 4th slow probe.
    const seen: boolean[] = [];
    let slow = false;
    const watched: { monitor?: DependencyMonitor } = {};
    const kafka = async () => {
      if (!slow) return;
      seen.push(watched.monitor?.isUp('kafka') ?? true);
      throw new Error('no answer within 5 ms');
    };
    const { monitor } = await start(kafka);
    watched.monitor = monitor;
    try {
      slow = true;
      await until(() => seen.length >= 4);
      expect(seen.slice(0, 4)).toEqual([true, true, true, false]);
      expect(monitor.checks().kafka).toMatchObject({ ok: false, error: 'no answer within 5 ms' });
    } finally {
      await monitor.stop();
    }
  });

  it('tells a refused connection from a slow one, however the Kafka client or fetch wrap it', async () => {
    expect(isRefused(Object.assign(new Error('fetch failed'), { cause: { code: 'ECONNREFUSED' } }))).toBe(true);
    expect(isRefused(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:19092'))).toBe(true);
    expect(isRefused(new Error('no answer within 1500 ms'))).toBe(false);
    // The client's own failure, from a port nothing listens on: each attempt's error inside the last one's.
    const admin = quietKafka(['127.0.0.1:9'], 'refused-probe', { probe: { requestTimeoutMs: 500 } }).admin();
    const refused = await admin.connect().then(
      () => undefined,
      (error: unknown) => error,
    );
    await admin.disconnect().catch(() => undefined);
    expect(refused).toBeDefined();
    expect(isRefused(refused)).toBe(true);
  });
});
