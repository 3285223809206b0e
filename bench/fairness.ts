import { spawn } from 'node:child_process';
import { ensureStack } from '../stack/stack.ts';
import { newTenant, type Tenant } from '../test/support/client.ts';
import { startServiceProcess, uniqueName } from '../test/support/service-process.ts';
import { percentile } from './measure.ts';

/**
 * Issue 29's fairness: tenant A floods POST /products at concurrency `BENCH_FLOOD_CONCURRENCY` (100) while tenant B
 * writes one product every `BENCH_QUIET_INTERVAL_MS` (200 ms). B's latency alone, then during the flood, each for
 * `BENCH_FAIRNESS_SECONDS` (60: B's p99 is then its third slowest of 300, where 30 s made it the second of 150 and
 * moved the ratio by half between runs); A's answers by status. A ignores Retry-After (a flood does), unless
 * `BENCH_FLOOD_HONOURS_RETRY_AFTER=true`. Settings of the service (RATE_LIMIT_*) pass through from the environment.
 * The flood runs in a process of its own (this file again, with BENCH_FLOOD_OF set), so that its event loop, busy
 * with a hundred writers, does not delay B's writes and their clocks here.
 */
const FLOOD = Number(process.env.BENCH_FLOOD_CONCURRENCY ?? 100);
const INTERVAL_MS = Number(process.env.BENCH_QUIET_INTERVAL_MS ?? 200);
const SECONDS = Number(process.env.BENCH_FAIRNESS_SECONDS ?? 60);
const HONOURS_RETRY_AFTER = process.env.BENCH_FLOOD_HONOURS_RETRY_AFTER === 'true';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Quiet = { latencies: number[]; failed: Map<number, number> };

/** B's writes, one every INTERVAL_MS (not waiting for the one before: a late answer does not thin the samples), for SECONDS. */
async function quietWrites(tenant: Tenant, label: string): Promise<Quiet> {
  const latencies: number[] = [];
  const failed = new Map<number, number>();
  const writes: Promise<void>[] = [];
  const end = performance.now() + SECONDS * 1000;
  for (let i = 0; performance.now() < end; i++) {
    writes.push(
      (async () => {
        const t0 = performance.now();
        const r = await tenant.request('POST', '/api/v1/pim/products', { title: `quiet ${label} ${i}` });
        if (r.status === 201) latencies.push(performance.now() - t0);
        else failed.set(r.status, (failed.get(r.status) ?? 0) + 1);
      })(),
    );
    await sleep(INTERVAL_MS);
  }
  await Promise.all(writes);
  latencies.sort((a, b) => a - b);
  return { latencies, failed };
}

/** In the flood's own process: A's FLOOD writers, each sending its next write as soon as the last is answered, until stdin ends. */
async function flood(baseUrl: string, owner: { tenantId: string; orgId: string }): Promise<void> {
  const tenant = await newTenant(baseUrl, owner);
  const statuses: Record<number, number> = {};
  let stopped = false;
  process.stdin.on('end', () => (stopped = true)).resume();
  let i = 0;
  await Promise.all(
    Array.from({ length: FLOOD }, async () => {
      while (!stopped) {
        const r = await tenant.request('POST', '/api/v1/pim/products', { title: `flood ${i++}` });
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status === 429 && HONOURS_RETRY_AFTER) await sleep(Number(r.headers.get('retry-after') ?? 1) * 1000);
      }
    }),
  );
  process.stdout.write(JSON.stringify(statuses));
}

/** Starts the flood's process; `stop` ends it and resolves A's answers by status. */
function startFlood(baseUrl: string, owner: { tenantId: string; orgId: string }) {
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1] ?? 'bench/fairness.ts'], {
    env: { ...process.env, BENCH_FLOOD_OF: JSON.stringify({ baseUrl, ...owner }) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    stop: async (): Promise<Map<number, number>> => {
      child.stdin.end();
      await exited;
      return new Map(Object.entries(JSON.parse(out || '{}') as Record<string, number>).map(([s, n]) => [Number(s), n]));
    },
  };
}

if (process.env.BENCH_FLOOD_OF) {
  const { baseUrl, tenantId, orgId } = JSON.parse(process.env.BENCH_FLOOD_OF) as { baseUrl: string; tenantId: string; orgId: string };
  await flood(baseUrl, { tenantId, orgId });
  process.exit(0);
}

const stack = await ensureStack({ log: () => undefined });
const namespace = uniqueName('bench-fairness');
const database = `cl_${namespace.replace(/-/g, '_')}`;
const service = await startServiceProcess(stack, { namespace, database, env: { LOG_LEVEL: 'error' } });
try {
  const [a, b] = [await newTenant(service.baseUrl), await newTenant(service.baseUrl)];
  for (let i = 0; i < 50; i++) await b.request('POST', '/api/v1/pim/products', { title: `warm-up ${i}` });
  for (let i = 0; i < 50; i++) await a.request('POST', '/api/v1/pim/products', { title: `warm-up ${i}` });

  const alone = await quietWrites(b, 'alone');
  const flooding = startFlood(service.baseUrl, a);
  const started = performance.now();
  await sleep(2_000); // the flood reaches its pace before B's samples start
  const during = await quietWrites(b, 'flood');
  const statuses = await flooding.stop();
  const floodSeconds = (performance.now() - started) / 1000;

  const row = (name: string, q: Quiet) =>
    `| ${name} | ${q.latencies.length} | ${percentile(q.latencies, 50).toFixed(1)} | ${percentile(q.latencies, 99).toFixed(1)} | ${[...q.failed].map(([s, n]) => `${n}×${s}`).join(' ') || '0'} |`;
  const settings = Object.entries(process.env)
    .filter(([key]) => key.startsWith('RATE_LIMIT_'))
    .map(([key, value]) => `${key}=${value}`);
  console.log(
    `\nFairness: A floods POST /products at c=${FLOOD}${HONOURS_RETRY_AFTER ? ' (honouring Retry-After)' : ''}; B writes every ${INTERVAL_MS} ms, ${SECONDS} s each`,
  );
  console.log(`settings: ${settings.join(' ') || 'the defaults'}`);
  console.log('| B’s writes | answered 201 | p50 ms | p99 ms | not 201 |');
  console.log('| --- | ---: | ---: | ---: | --- |');
  console.log(row('alone', alone));
  console.log(row('during A’s flood', during));
  const ratio = percentile(during.latencies, 99) / percentile(alone.latencies, 99);
  console.log(`B's p99 during the flood / alone: ${ratio.toFixed(2)}×`);
  const byStatus = [...statuses].sort(([x], [y]) => x - y);
  console.log(
    `A's answers over ${floodSeconds.toFixed(0)} s: ${byStatus.map(([s, n]) => `${n}×${s} (${(n / floodSeconds).toFixed(0)}/s)`).join(', ')}`,
  );
} finally {
  await service.discard();
}
