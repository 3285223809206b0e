import { logEnds, partitionOfKey, quietKafka } from '../../ledger/kafka.ts';
import { inject } from 'vitest';
import { namespaced, type TopicSpec } from '../../ledger/topics.ts';
import type { Tenant } from './client.ts';
import { eventually } from './private-outage.ts';
import type { Service } from './service-process.ts';

/**
 * Helpers for tests that run several instances of the service on one namespace and database: requests that may
 * meet a dead or paused instance, readiness and restart counters per instance, and the partition a key lands on.
 */

/** What an instance answered; `unreachable` when the request failed at the socket or timed out (never acknowledged). */
export type Answer = { status: number | 'unreachable'; body: any };

const parsed = (text: string): unknown => {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
};

/** One request as `tenant` to one instance, bounded by `timeoutMs`: a socket error or a timeout is an answer too. */
export async function call(
  baseUrl: string,
  tenant: Tenant,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Answer> {
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...tenant.headers, ...options.headers },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
    return { status: response.status, body: parsed(await response.text()) };
  } catch (error) {
    return { status: 'unreachable', body: String(error) };
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads until `until` holds or the deadline passes (`eventually`); `met` says which. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  until: (value: T) => boolean,
  { deadlineMs, intervalMs = 250 }: { deadlineMs: number; intervalMs?: number },
): Promise<{ value: T; met: boolean }> {
  const value = await eventually(read, until, deadlineMs, intervalMs);
  return { value, met: until(value) };
}

/** `GET /health/ready` of one instance: its status code, or `unreachable`. */
export async function readiness(service: Service): Promise<number | 'unreachable'> {
  try {
    return (await fetch(`${service.baseUrl}/health/ready`, { signal: AbortSignal.timeout(5_000) })).status;
  } catch {
    return 'unreachable';
  }
}

/** Polls every instance's readiness until all answer 200 together, or the deadline passes: the last answers, by port. */
export async function waitUntilReady(
  services: Service[],
  deadlineMs: number,
): Promise<{ met: boolean; statuses: (number | 'unreachable')[] }> {
  const { value, met } = await pollUntil(
    () => Promise.all(services.map(readiness)),
    (statuses) => statuses.every((status) => status === 200),
    { deadlineMs, intervalMs: 500 },
  );
  return { met, statuses: value };
}

/** `ledger_part_restarts` of one instance, by part; undefined when it does not answer. */
export async function partRestarts(service: Service): Promise<Record<string, number> | undefined> {
  try {
    const text = await (await fetch(`${service.baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
    return Object.fromEntries([...text.matchAll(/^ledger_part_restarts\{part="([^"]+)"\} (\S+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
  } catch {
    return undefined;
  }
}

/** The restarts of the parts that own transactional producers (command processors, event routers, the processor thread). */
export const transactionalRestarts = (restarts: Record<string, number> | undefined): number =>
  Object.entries(restarts ?? {})
    .filter(([part]) => /processor|router/.test(part))
    .reduce((sum, [, value]) => sum + value, 0);

/** The partitions of one of the namespace's topics. */
export async function partitionCount(namespace: string, topic: TopicSpec): Promise<number> {
  const kafka = quietKafka(inject('stack').kafkaBrokers, 'test-partitions');
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await logEnds(admin, namespaced(namespace, topic.name))).size;
  } finally {
    await admin.disconnect();
  }
}

/** The partition the service's producers give a record keyed by `key` on a topic of `partitions`. */
export const partitionOf = partitionOfKey;

export const countBy = <T>(values: readonly T[], key: (value: T) => string): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(key(value), (counts.get(key(value)) ?? 0) + 1);
  return counts;
};

/** Runs `work(i)` for i in [0, count) with at most `inFlight` at a time; the answers in order of i. */
export async function inParallel<T>(count: number, inFlight: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(inFlight, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await work(i);
      }
    }),
  );
  return results;
}

/** Sends a signal to a pid if it is still there (a SIGCONT to a process that has exited is not an error). */
export function signal(pid: number | undefined, name: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, name);
  } catch {
    // gone already
  }
}

/** Every page of `GET /api/v1/pim/products` (newest first), from one instance. */
export async function allProducts(baseUrl: string, tenant: Tenant): Promise<{ id: string }[] | undefined> {
  const products: { id: string }[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await call(baseUrl, tenant, 'GET', `/api/v1/pim/products?limit=1000&offset=${offset}`);
    if (page.status !== 200) return undefined;
    products.push(...(page.body as { id: string }[]));
    if (page.body.length < 1000) return products;
  }
}

/** Every page of `GET /api/v1/oms/orders` (pending orders are not listed), from one instance. */
export async function allOrders(baseUrl: string, tenant: Tenant): Promise<any[] | undefined> {
  const orders: any[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await call(baseUrl, tenant, 'GET', `/api/v1/oms/orders?limit=100&offset=${offset}`);
    if (page.status !== 200) return undefined;
    orders.push(...page.body.data);
    if (page.body.data.length < 100) return orders;
  }
}

export type SteadyWindow = {
  answers: Answer[];
  /** One row a second: every instance's `/health/ready` status. */
  readiness: (number | 'unreachable')[][];
  /** Restarts of the transactional parts (processors, routers) of each instance, before and after the window. */
  restartsBefore: number[];
  restartsAfter: number[];
};

/**
 * Writes round-robin through `services` (`inFlight` at a time) for `durationMs`, probing every instance's readiness once
 * a second, and reads the processors' and routers' restarts before and after: with a steady membership, a healthy
 * deployment answers every write, stays ready and restarts nothing.
 */
export async function steadyWindow(
  services: Service[],
  { durationMs, inFlight }: { durationMs: number; inFlight: number },
  write: (service: Service, i: number) => Promise<Answer>,
): Promise<SteadyWindow> {
  const restartsBefore = (await Promise.all(services.map(partRestarts))).map(transactionalRestarts);
  const end = Date.now() + durationMs;
  const answers: Answer[] = [];
  const readinessRows: (number | 'unreachable')[][] = [];
  let next = 0;
  const writer = async () => {
    while (Date.now() < end) {
      const i = next++;
      answers.push(await write(services[i % services.length]!, i));
    }
  };
  const prober = async () => {
    while (Date.now() < end) {
      readinessRows.push(await Promise.all(services.map(readiness)));
      await sleep(1_000);
    }
  };
  await Promise.all([prober(), ...Array.from({ length: inFlight }, writer)]);
  const restartsAfter = (await Promise.all(services.map(partRestarts))).map(transactionalRestarts);
  return { answers, readiness: readinessRows, restartsBefore, restartsAfter };
}
