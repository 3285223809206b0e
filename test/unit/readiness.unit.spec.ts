import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DependencyMonitor } from '../../ledger/dependencies.ts';
import { READY_LAG_LIMIT, readinessOf, RECENT_FAILURE_MS } from '../../ledger/readiness.ts';
import { Supervisor } from '../../ledger/supervisor.ts';

const silent = pino({ level: 'silent' });
const up = async () => undefined;
const down = async () => {
  throw new Error('connect ECONNREFUSED');
};

const runningPart = async (name: string) => {
  const supervisor = new Supervisor(name, silent);
  await supervisor.start({ start: async () => supervisor.running(), stop: async () => undefined });
  return supervisor;
};

describe('readiness', () => {
  it('is ready when every dependency answers, every part runs, progress is heard and no projection lags far behind', async () => {
    const dependencies = new DependencyMonitor({ kafka: up, registry: up, postgres: up }, silent);
    await dependencies.start();
    try {
      const readiness = readinessOf({
        dependencies,
        supervisors: [await runningPart('product-processor')],
        listening: () => true,
        lags: [{ projection: 'catalog', lagBehind: () => READY_LAG_LIMIT }],
      });
      expect(readiness.failing).toEqual([]);
      expect(readiness.ready).toBe(true);
      expect(Object.keys(readiness.checks).sort()).toEqual(
        ['kafka', 'postgres', 'product-processor', 'progress-listener', 'projection-catalog-lag', 'registry'].sort(),
      );
    } finally {
      await dependencies.stop();
    }
  });

  it('names every part that is not ready: a dependency down, a part failed lately, no listener, a projection far behind', async () => {
    const dependencies = new DependencyMonitor({ kafka: down, registry: up, postgres: up }, silent);
    await dependencies.start();
    try {
      const failedLately = await runningPart('order-router');
      failedLately.failed(new Error('Failed to find group coordinator'));
      const healthy = await runningPart('product-processor');
      const readiness = readinessOf({
        dependencies,
        supervisors: [failedLately, healthy],
        listening: () => false,
        lags: [{ projection: 'catalog', lagBehind: () => READY_LAG_LIMIT + 1 }],
      });
      expect(readiness.ready).toBe(false);
      expect(readiness.failing.sort()).toEqual(['kafka', 'order-router', 'progress-listener', 'projection-catalog-lag'].sort());
      expect(readiness.checks.kafka).toMatchObject({ ok: false, error: 'connect ECONNREFUSED' });
      expect(readiness.checks['order-router']).toMatchObject({ ok: false, lastError: 'Failed to find group coordinator' });
      await failedLately.stop();
      await healthy.stop();
    } finally {
      await dependencies.stop();
    }
  });

  it('holds a part that runs again back until its last failure is RECENT_FAILURE_MS old', async () => {
    const dependencies = new DependencyMonitor({ kafka: up, registry: up, postgres: up }, silent);
    await dependencies.start();
    const part = await runningPart('sku-router');
    try {
      part.failed(new Error('crash'));
      for (let i = 0; i < 200 && part.status().state !== 'running'; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(part.status().state).toBe('running');
      const sources = { dependencies, supervisors: [part], listening: () => true, lags: [] };
      const failedAt = part.status().lastFailureAt;
      expect(readinessOf(sources, failedAt + RECENT_FAILURE_MS).failing).toEqual(['sku-router']);
      expect(readinessOf(sources, failedAt + RECENT_FAILURE_MS + 1).ready).toBe(true);
    } finally {
      await part.stop();
      await dependencies.stop();
    }
  });
});
