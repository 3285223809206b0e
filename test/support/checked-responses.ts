import { OpenapiContract } from './openapi-contract.ts';

/**
 * Every response a test receives from a service it started is checked against that service's own /openapi.json
 * (openapi-contract.ts). `checkResponses()` wraps the global fetch, through which the tests' client (client.ts) and
 * their direct calls go; `startServiceProcess` names each service's base URL (`serviceStarted`), whose document is
 * read then, while it is surely up. Responses of anything else (object storage, stand-ins, webhook receivers) pass
 * untouched, as do those of a service that publishes no document (an instance without the api role).
 *
 * A response that breaks the document is recorded, not thrown at the caller (which may expect fetch to fail, or catch
 * everything): the test's afterEach takes the record and fails the test (checked-responses-setup.ts).
 */

export type ResponseCounts = {
  /** Responses judged against an operation of the document. */
  checked: number;
  /** Responses of a service for something that is no operation of its document (health, metrics, /files/, an unknown path). */
  outsideDocument: number;
  /** Responses from a service without a document, reached through a redirect fetch followed, or with a body cut off. */
  uncheckable: number;
  violations: number;
};

const counts: ResponseCounts = { checked: 0, outsideDocument: 0, uncheckable: 0, violations: 0 };
const violations: string[] = [];
const contracts = new Map<string, OpenapiContract | undefined>();
let originalFetch: typeof fetch | undefined;

/** Reads the service's document (when the check is on): call once the service at `baseUrl` answers. */
export async function serviceStarted(baseUrl: string): Promise<void> {
  if (!originalFetch) return;
  const origin = new URL(baseUrl).origin;
  const response = await originalFetch(`${origin}/openapi.json`);
  // An instance without the api role serves no document (404); any other failure is the document's, and loud.
  if (response.status === 404) {
    contracts.set(origin, undefined);
    return;
  }
  if (!response.ok) throw new Error(`${origin}/openapi.json answered ${response.status}: ${await response.text()}`);
  contracts.set(origin, new OpenapiContract((await response.json()) as ConstructorParameters<typeof OpenapiContract>[0]));
}

const requestOf = (input: Parameters<typeof fetch>[0], init: Parameters<typeof fetch>[1]) => {
  const request = input instanceof Request ? input : undefined;
  const url = new URL(request?.url ?? String(input));
  return { url, method: (init?.method ?? request?.method ?? 'GET').toUpperCase() };
};

/** The body's text, or undefined when it cannot be read (the request's signal aborted it). */
const bodyOf = (response: Response): Promise<string | undefined> =>
  response
    .clone()
    .text()
    .catch(() => undefined);

async function judge(method: string, url: URL, response: Response): Promise<void> {
  const contract = contracts.get(url.origin);
  const body = contract && !response.redirected ? await bodyOf(response) : undefined;
  if (!contract || body === undefined) {
    counts.uncheckable++;
    return;
  }
  let verdict;
  try {
    verdict = contract.check({ method, path: url.pathname, status: response.status, headers: response.headers, body });
  } catch (error) {
    verdict = { operation: `${method} ${url.pathname}`, problems: [`the document's schema cannot be used: ${(error as Error).message}`] };
  }
  if (!verdict) {
    counts.outsideDocument++;
    return;
  }
  counts.checked++;
  if (verdict.problems.length === 0) return;
  counts.violations++;
  violations.push(`${method} ${url.pathname}${url.search} → ${response.status} (${verdict.operation}): ${verdict.problems.join('; ')}`);
}

/** Wraps the global fetch: from now on responses of started services are judged. */
export function checkResponses(): void {
  if (originalFetch) return;
  const unchecked = globalThis.fetch;
  originalFetch = unchecked;
  globalThis.fetch = async (input, init) => {
    const response = await unchecked(input, init);
    const { url, method } = requestOf(input, init);
    if (contracts.has(url.origin)) await judge(method, url, response);
    return response;
  };
}

/** The violations recorded since the last call. */
export const takeViolations = (): string[] => violations.splice(0);

export const responseCounts = (): ResponseCounts => ({ ...counts });
