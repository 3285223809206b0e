import type { Reporter, TestModule } from 'vitest/node';

/** Ends the run with the plain `N passed, N failed, N skipped` line that CI reads. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      // A file whose setup failed fails as a whole: its tests are skipped, so count the file itself as a failure.
      if (module.state() === 'failed' && [...module.children.allTests()].every((test) => test.result().state !== 'failed')) counts.failed++;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') counts.failed++;
        else counts.skipped++;
      }
    }
    const responses = { checked: 0, outsideDocument: 0, uncheckable: 0, violations: 0 };
    for (const module of testModules) {
      const counted = module.meta().openapiResponses;
      if (counted) for (const key of Object.keys(responses) as (keyof typeof responses)[]) responses[key] += counted[key];
    }
    if (responses.checked + responses.outsideDocument + responses.uncheckable > 0) {
      console.log(
        `\nOpenAPI: ${responses.checked} responses checked against /openapi.json, ${responses.violations} broke it; ` +
          `${responses.outsideDocument} were of no documented operation, ${responses.uncheckable} could not be checked`,
      );
    }
    console.log(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}
