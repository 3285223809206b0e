import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.unit.spec.ts'] } },
      {
        test: {
          name: 'stack',
          include: ['test/int/**/*.int.spec.ts', 'test/e2e/**/*.e2e.spec.ts'],
          // The real local stack (Kafka, schema registry, Postgres), started or reused once per run.
          globalSetup: ['test/support/global-setup.ts'],
          // Every response of a service a test starts is checked against the service's /openapi.json.
          setupFiles: ['test/support/checked-responses-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 240_000,
        },
      },
    ],
  },
});
