import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { platformProductOf } from '../consumers/integrations/commerce-item.ts';
import type { RemoteItem } from '../adapters/provider/provider.ts';
import { UnifiedClient } from '../adapters/provider/unified-client.ts';
import { ensureStack } from '../stack/stack.ts';
import { startUnifiedStandIn, type LoggedRequest } from '../stack/unified/stand-in.ts';
import { newTenant, type Tenant } from '../test/support/client.ts';
import { startServiceProcess, uniqueName, type Service } from '../test/support/service-process.ts';
import { cpuBetween, readCpu } from './cpu.ts';
import { stackCpuSources, untilReady, workCounter } from './service-work.ts';
import { printCpu, sumOf, withOthers, type Column, type Phase } from './cpu-report.ts';
import { measure, opsPerSecond, type Figures } from './measure.ts';

/**
 * The product push to the provider stand-in, beside a bare loop of the same HTTP calls (UnifiedClient, the same item
 * body, the same concurrency as the service's push worker) against the same stand-in, in the same run. Issue 11's
 * goal: the push delivers at least half as many products per second as the bare loop.
 */
const stack = await ensureStack({ log: () => undefined });
const N = Number(process.env.BENCH_PUSH_PRODUCTS ?? 2000);
const M = Math.min(N, Number(process.env.BENCH_PUSH_UPDATES ?? 1000));
const CONNECTIONS = (process.env.BENCH_PUSH_CONNECTIONS ?? '1,4').split(',').map(Number);
const PER_CONNECTION = Number(process.env.BENCH_PUSH_PER_CONNECTION ?? 8); // the service's PUSH_PER_CONNECTION default
const API_CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const TIMEOUT_MS = Number(process.env.BENCH_PUSH_TIMEOUT_SECONDS ?? 600) * 1000;

const running: { service?: Service } = {};
const { sources, backends } = stackCpuSources(running);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Row = Phase & { baseline?: Phase; note?: string };
const rows: Row[] = [];
const cpuPhases: Phase[] = [];

async function withCpu<T extends Figures>(involved: Column[], run: () => Promise<T>): Promise<Phase> {
  const before = readCpu(sources);
  const figures = await run();
  const phase: Phase = { ...figures, cpu: withOthers(cpuBetween(before, readCpu(sources))), involved };
  cpuPhases.push(phase);
  return phase;
}

// The stand-in lives in this process: its CPU is in the `bench` column, in the baselines and the push rows alike.
const standIn = await startUnifiedStandIn();
const client = new UnifiedClient({ baseUrl: standIn.url, token: standIn.token, timeoutMs: 10_000 });

/** The body our push sends for a product made through the API with a title and a description (no variants, no media). */
const itemOf = (title: string) =>
  platformProductOf(
    { id: randomUUID(), title, description: `${title} described`, category: null, sku: null, brand: null, status: 'ACTIVE' },
    [],
    [],
  ).item;

// Warm the client and the stand-in (JIT, sockets) before timing, as the service's first pushes are not timed warm either way.
const warm = standIn.createConnection('shopify');
await measure('warm-up', 500, PER_CONNECTION, async (i) => void (await client.createItem(warm, itemOf(`warm ${i}`))));

// Baselines: the bare loop, `PER_CONNECTION` calls in flight per stand-in connection, as the push worker allows.
const baselineCreate = new Map<number, Phase>();
let baselineItems: { connection: string; item: RemoteItem }[] = [];
for (const k of CONNECTIONS) {
  const connections = Array.from({ length: k }, () => standIn.createConnection('shopify'));
  const created: { connection: string; item: RemoteItem }[] = [];
  const phase = await withCpu(['bench'], () =>
    measure(`baseline: bare createItem loop, ${k} conn (c=${PER_CONNECTION * k})`, N * k, PER_CONNECTION * k, async (i) => {
      const connection = connections[i % k]!;
      created.push({ connection, item: await client.createItem(connection, itemOf(`bench ${i}`)) });
    }),
  );
  baselineCreate.set(k, phase);
  if (k === 1 || baselineItems.length === 0) baselineItems = created;
}
const baselineUpdate = await withCpu(['bench'], () =>
  measure(`baseline: bare updateItem loop, 1 conn (c=${PER_CONNECTION})`, M, PER_CONNECTION, async (i) => {
    const { connection, item } = baselineItems[i % baselineItems.length]!;
    await client.updateItem(connection, item.id, itemOf(`bench ${i} v2`));
  }),
);

const namespace = uniqueName('bench-push');
const database = `cl_${namespace.replace(/-/g, '_')}`;
backends.watch(database);
const service = await startServiceProcess(stack, {
  namespace,
  database,
  env: {
    LOG_LEVEL: 'error',
    UNIFIED_API_URL: standIn.url,
    PUSH_PER_CONNECTION: String(PER_CONNECTION),
  },
});
running.service = service;

const counter = await workCounter({ postgresServerUrl: stack.postgresServerUrl, brokers: stack.kafkaBrokers, database, namespace });
const work = counter.read;
const workLines: string[] = [];
async function countWork<T extends { count: number }>(name: string, run: () => Promise<T>): Promise<T> {
  const before = await work();
  const result = await run();
  await sleep(1500); // pg_stat_database: let the backends flush their counters
  const after = await work();
  workLines.push(counter.describe(name, before, after, result.count, 'item'));
  return result;
}

const untilServiceReady = () => untilReady(service.baseUrl, 60_000);

/** Successful calls of `method` on the connection's items since `from` (ms since the epoch), from the stand-in's log. */
const landed = (connection: string, method: string, from: number): LoggedRequest[] =>
  standIn.requests(connection).filter((r) => r.at >= from && r.method === method && r.status === 200 && r.path.includes('/item'));

type SyncBody = { initial_sync: { total: number; pushed: number; failed: number; complete: boolean }; items: Record<string, number> };
const syncOf = async (tenant: Tenant, id: string): Promise<SyncBody> => {
  const r = await tenant.request<SyncBody>('GET', `/api/v1/integrations/connections/${id}/sync`);
  if (r.status !== 200) throw new Error(`sync answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
};

async function connect(tenant: Tenant): Promise<{ id: string; unified: string }> {
  const unified = standIn.createConnection('shopify');
  let saved = await tenant.request('POST', '/api/v1/integrations/callback', { connection_id: unified });
  // A loaded machine can make the ledger answer late (503); saving the same connection again is idempotent.
  for (let attempt = 1; saved.status === 503 && attempt < 5; attempt++)
    saved = await tenant.request('POST', '/api/v1/integrations/callback', { connection_id: unified });
  if (saved.status !== 201) throw new Error(`callback answered ${saved.status}: ${JSON.stringify(saved.body)}`);
  return { id: (saved.body as { connection: { id: string } }).connection.id, unified };
}

const breakdowns: string[] = [];
let failure: unknown;
try {
  const tenant = await newTenant(service.baseUrl);
  const productIds: string[] = [];
  const creation = await measure(`setup: POST /products (c=${API_CONCURRENCY})`, N, API_CONCURRENCY, async (i) => {
    const r = await tenant.request('POST', '/api/v1/pim/products', { title: `bench ${i}`, description: `bench ${i} described` });
    if (r.status !== 201) throw new Error(`create answered ${r.status}`);
    productIds.push(r.body.id);
  });
  console.log(`setup: ${N} products through the API in ${creation.seconds.toFixed(1)} s (${opsPerSecond(creation).toFixed(0)}/s)`);
  // The initial sync requests the products the push projection has: every one of them, once the consumers caught up.
  await untilServiceReady();

  let first: { id: string; unified: string } | undefined;
  const initialSync = async (k: number) => {
    const t0 = Date.now();
    const started = performance.now();
    const connections = await Promise.all(Array.from({ length: k }, () => connect(tenant)));
    const callbacksDone = performance.now();
    const deadline = Date.now() + TIMEOUT_MS;
    // The stand-in's log first (in this process, free), the service's status only once everything has landed.
    while (connections.some((c) => landed(c.unified, 'POST', t0).length < N) && Date.now() < deadline) await sleep(20);
    const posts = connections.flatMap((c) => landed(c.unified, 'POST', t0));
    const allLanded = performance.now();
    while (Date.now() < deadline) {
      const statuses = await Promise.all(connections.map((c) => syncOf(tenant, c.id)));
      if (statuses.every((s) => s.initial_sync.complete && s.items.pending === 0)) break;
      await sleep(50);
    }
    const complete = performance.now();
    const ats = posts.map((p) => p.at).sort((a, b) => a - b);
    const firstAt = (ats[0] ?? t0) - t0;
    const lastAt = (ats.at(-1) ?? t0) - t0;
    breakdowns.push(
      `initial sync, ${k} conn: callback${k > 1 ? 's' : ''} answered ${(callbacksDone - started).toFixed(0)} ms, first item landed at ` +
        `${firstAt} ms, last at ${lastAt} ms (${((posts.length / Math.max(1, lastAt - firstAt)) * 1000).toFixed(0)} items/s between them), ` +
        `status complete at ${(complete - started).toFixed(0)} ms (${(complete - allLanded).toFixed(0)} ms after the last landed)`,
    );
    if (!first) first = connections[0];
    return {
      name: `push: initial sync, ${k} conn × ${N} products`,
      count: posts.length,
      seconds: (complete - started) / 1000,
      p50: NaN,
      p99: NaN,
    };
  };

  for (const k of CONNECTIONS) {
    const phase = await countWork(`initial sync, ${k} conn`, () => withCpu(['service', 'kafka', 'postgres'], () => initialSync(k)));
    rows.push({ ...phase, baseline: baselineCreate.get(k), note: 'callback → status complete' });
    if (rows.length === 1 && M > 0) {
      // Live changes to the first connection alone, before more connections share the worker.
      await untilServiceReady();
      const connection = first!;
      const remoteOf = new Map(
        standIn.items(connection.unified).map((item) => [item.id, item.metadata?.find((m) => m.slug)?.value.slice(3) ?? '']),
      );
      const answeredAt = new Map<string, number>();
      const live = await countWork(`live changes, 1 conn (PUT /products included)`, () =>
        withCpu(['service', 'kafka', 'postgres'], async () => {
          const t0 = Date.now();
          const started = performance.now();
          const updates = await measure(`live: PUT /products (c=${API_CONCURRENCY})`, M, API_CONCURRENCY, async (i) => {
            const id = productIds[i]!;
            const r = await tenant.request('PUT', `/api/v1/pim/products/${id}`, { title: `live ${i}` });
            if (r.status !== 200) throw new Error(`update answered ${r.status}`);
            answeredAt.set(id, Date.now());
          });
          const deadline = Date.now() + TIMEOUT_MS;
          while (landed(connection.unified, 'PUT', t0).length < M && Date.now() < deadline) await sleep(20);
          const seconds = (performance.now() - started) / 1000;
          const puts = landed(connection.unified, 'PUT', t0);
          const latencies = puts
            .map((p) => p.at - (answeredAt.get(remoteOf.get(p.path.split('/').at(-1) ?? '') ?? '') ?? NaN))
            .filter((l) => !Number.isNaN(l))
            .sort((a, b) => a - b);
          const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
          breakdowns.push(
            `live changes, 1 conn: ${M} PUT /products answered in ${updates.seconds.toFixed(1)} s (${opsPerSecond(updates).toFixed(0)}/s, ` +
              `the most the push can deliver); ${puts.length} item updates landed; from a PUT's answer to its item update at the stand-in: ` +
              `p50 ${pct(50).toFixed(0)} ms, p99 ${pct(99).toFixed(0)} ms`,
          );
          return { name: `push: live changes, 1 conn × ${M} updates`, count: puts.length, seconds, p50: pct(50), p99: pct(99) };
        }),
      );
      const titles = new Set(standIn.items(connection.unified).map((item) => item.name));
      const shown = Array.from({ length: M }, (_, i) => `live ${i}`).filter((t) => titles.has(t)).length;
      rows.push({ ...live, baseline: baselineUpdate, note: `first PUT → last item updated; ${shown}/${M} new titles at the stand-in` });
      await untilServiceReady();
    }
  }
} catch (error) {
  failure = error;
} finally {
  await service.discard(); // its topics and database too: a run leaves nothing on the shared stack
  backends.stop();
  await counter.close();
  await client.close();
  await standIn.close();
}

const perSecond = (p: Phase) => p.count / p.seconds;
console.log(
  `\nProducts delivered to the stand-in per second, beside the bare loop of the same calls (PUSH_PER_CONNECTION=${PER_CONNECTION})`,
);
console.log(
  `${'measurement'.padEnd(48)} ${'items'.padStart(6)} ${'s'.padStart(7)} ${'items/s'.padStart(8)} ${'bare loop'.padStart(10)} ${'ratio'.padStart(6)}  how`,
);
for (const row of rows) {
  const base = row.baseline ? perSecond(row.baseline) : undefined;
  console.log(
    `${row.name.padEnd(48)} ${String(row.count).padStart(6)} ${row.seconds.toFixed(1).padStart(7)} ${perSecond(row).toFixed(0).padStart(8)} ` +
      `${(base === undefined ? '-' : base.toFixed(0)).padStart(10)} ${(base === undefined ? '-' : `${(perSecond(row) / base).toFixed(2)}×`).padStart(6)}  ${row.note ?? ''}`,
  );
}
console.log(`baselines (bench process: the client and the stand-in):`);
for (const b of [...baselineCreate.values(), baselineUpdate])
  console.log(
    `  ${b.name.padEnd(52)} ${perSecond(b).toFixed(0).padStart(6)} items/s, p50 ${b.p50.toFixed(1)} ms, p99 ${b.p99.toFixed(1)} ms`,
  );
console.log(`\nWhere the time goes:`);
for (const line of [...breakdowns, ...workLines]) console.log(`  ${line}`);

printCpu(cpuPhases);
const cpuOf = (p: Phase) => sumOf(p)?.toFixed(2) ?? '-';
for (const row of rows)
  if (row.baseline)
    console.log(
      `  ${row.name}: ${cpuOf(row)} ms per item (service + Kafka + Postgres) against ${cpuOf(row.baseline)} ms (bench: client + stand-in)`,
    );
console.log(
  `  bench: this process, which holds the stand-in (in every row) and the baselines' client; in the push rows also the status polling and, for live changes, the API client.\n` +
    `  Per operation = per item delivered to the stand-in. Kafka and Postgres are shared: see the others column and the load average.`,
);
const load = loadavg().map((l) => l.toFixed(2));
console.log(`\nload average at the end: ${load.join(', ')}`);
if (failure) {
  console.error(failure);
  process.exit(1);
}
process.exit(0);
