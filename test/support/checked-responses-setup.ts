import { afterAll, afterEach, beforeAll } from 'vitest';
import { checkResponses, responseCounts, takeViolations, type ResponseCounts } from './checked-responses.ts';

declare module 'vitest' {
  interface TaskMeta {
    /** What this file's responses were found to be, for the run's summary (summary-reporter.ts). */
    openapiResponses?: ResponseCounts;
  }
}

/**
 * Set up for every file of the stack project (vitest.config.ts): each response from a service the file starts is
 * checked against its /openapi.json, and a test during which one broke the document fails (after its own assertions),
 * naming the request, the operation and what broke. A response received outside any test fails the file.
 */
checkResponses();

const failOn = (violations: string[], when: string) => {
  if (violations.length > 0) {
    throw new Error(`${violations.length} response(s) ${when} break the service's OpenAPI document:\n${violations.join('\n')}`);
  }
};

let before: ResponseCounts;
beforeAll(() => {
  before = responseCounts();
});
afterEach(() => failOn(takeViolations(), 'of this test'));
// vitest reads a hook's first parameter as the fixtures it uses, and takes only a destructuring pattern there.
// eslint-disable-next-line no-empty-pattern
afterAll(({}, file) => {
  const after = responseCounts();
  file.meta.openapiResponses = Object.fromEntries(
    Object.entries(after).map(([key, value]) => [key, value - before[key as keyof ResponseCounts]]),
  ) as ResponseCounts;
  failOn(takeViolations(), 'outside any test');
});
