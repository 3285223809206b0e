import { defineConfig } from 'vitest/config';

// `npm run test:cluster`: the three-broker cluster tests (issue 29), each on a cluster of its own. Not in `npm test`:
// with @platformatic/kafka 2.x they pass at a write every 2 s per stream, but at their own rate three brokers on the
// loaded 2-core build machine are saturated with no fault at all, whatever the client (docs/decisions.md, "The move to
// 2.x").
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 1,
    reporters: ['default', './test/support/summary-reporter.ts'],
    include: ['test/cluster/**/*.cluster.spec.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/checked-responses-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 600_000,
  },
});
