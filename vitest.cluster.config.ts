import { defineConfig } from 'vitest/config';

// The three-broker cluster tests (issue 29), each on a cluster of its own: `npm test` runs them last, after the Node
// versions, on their own so that the rest of the suite does not share the two cores with three more brokers (a write
// takes a second or more there with no fault at all); `npm run test:cluster` runs them alone.
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
