import { createHmac } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { ensureStack } from '../stack/stack.ts';
import { startUnifiedStandIn } from '../stack/unified/stand-in.ts';
import { newTenant, type Tenant } from '../test/support/client.ts';
import { startServiceProcess, uniqueName, type Service } from '../test/support/service-process.ts';
import { cpuBetween, readCpu } from './cpu.ts';
import { brokerAgeLine, stackCpuSources, untilReady, workCounter, type Work } from './service-work.ts';
import { printCpu, sumOf, withOthers, type Column, type Phase } from './cpu-report.ts';
import { measure, opsPerSecond, type Figures } from './measure.ts';
import { startBaselineProcess } from './baseline-process.ts';

/**
 * Signed webhook ingest: N distinct order events, each delivered REDELIVERIES times (shuffled, C at a time), to the
 * service's receiver, beside what users would run instead — a bare fastify route that verifies the same HMAC and keeps
 * each event once in a Postgres outbox, in a process of its own (bench/webhook-baseline.ts) — over the same bodies, in the
 * same run. Issue 30's goal: at least 0.3× that baseline's deliveries per second, and exactly one order per event after.
 */
const stack = await ensureStack({ log: () => undefined });
const brokerAtStart = brokerAgeLine('when this run began');
const N = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 800);
const REDELIVERIES = Number(process.env.BENCH_WEBHOOK_REDELIVERIES ?? 3);
const C = Number(process.env.BENCH_CONCURRENCY ?? 20);
const WARM = 200;
const MAP_TIMEOUT_MS = Number(process.env.BENCH_WEBHOOK_TIMEOUT_SECONDS ?? 600) * 1000;
// Set: the service is profiled (V8 CPU profile of the whole run), written into this directory when it stops.
const PROFILE_DIR = process.env.BENCH_WEBHOOK_PROFILE_DIR;

const running: { service?: Service; baseline?: { pid: number } } = {};
const { sources, backends } = stackCpuSources(running);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const cpuPhases: Phase[] = [];

async function withCpu<T extends Figures>(involved: Column[], run: () => Promise<T>): Promise<Phase & T> {
  const before = readCpu(sources);
  const figures = await run();
  const phase = { ...figures, cpu: withOthers(cpuBetween(before, readCpu(sources))), involved };
  cpuPhases.push(phase);
  return phase;
}

/** A deterministic shuffle (mulberry32), so that both sides get the same order of deliveries. */
function shuffled<T>(items: T[], seed = 12): T[] {
  let a = seed;
  const random = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

type Delivery = { event: number; raw: string; signature: string };

/** `count` distinct `accounting.order.created` events of 1–3 lines, signed, each `times` over, shuffled. */
function deliveries(secret: string, unified: string, prefix: string, count: number, times: number): Delivery[] {
  const signed = Array.from({ length: count }, (_, event) => {
    const raw = JSON.stringify({
      connection_id: unified,
      event: 'accounting.order.created',
      data: {
        id: `${prefix}-${event}`,
        currency: 'USD',
        line_items: Array.from({ length: 1 + (event % 3) }, (_, line) => ({
          sku: `SKU-${line}`,
          name: `Thing ${line}`,
          quantity: 1 + ((event + line) % 4),
          unit_amount: 9.99 + line,
        })),
        shipping_amount: 4.5,
      },
    });
    return { event, raw, signature: createHmac('sha256', secret).update(raw).digest('hex') };
  });
  return shuffled(signed.flatMap((d) => Array.from({ length: times }, () => d)));
}

type Answers = { ok: number; duplicates: number; other: Map<number, number>; accepted: Set<number> };
const answers = (): Answers => ({ ok: 0, duplicates: 0, other: new Map(), accepted: new Set() });

async function post(url: string, d: Delivery, into: Answers): Promise<void> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-unified-signature': d.signature },
    body: d.raw,
  });
  const body = (await r.json().catch(() => null)) as { duplicate?: boolean } | null;
  if (r.status === 200) {
    into.ok++;
    into.accepted.add(d.event);
    if (body?.duplicate) into.duplicates++;
  } else into.other.set(r.status, (into.other.get(r.status) ?? 0) + 1);
}

const namespace = uniqueName('bench-webhook');
const database = `cl_${namespace.replace(/-/g, '_')}`;
backends.watch(database);
const standIn = await startUnifiedStandIn();
// --cpu-prof is refused in NODE_OPTIONS: a preloaded module profiles the service through the inspector instead.
const profiler = PROFILE_DIR ? join(PROFILE_DIR, 'profile-service.mjs') : undefined;
if (PROFILE_DIR && profiler) {
  mkdirSync(PROFILE_DIR, { recursive: true });
  writeFileSync(
    profiler,
    `import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
const session = new Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 1000 });
session.post('Profiler.start');
// A session of this thread answers synchronously: the profile is written before the process is gone.
process.on('exit', () => session.post('Profiler.stop', (error, result) => {
  if (!error) writeFileSync(${JSON.stringify(join(PROFILE_DIR, 'service.cpuprofile'))}, JSON.stringify(result.profile));
}));
`,
  );
}
const service = await startServiceProcess(stack, {
  namespace,
  database,
  env: {
    LOG_LEVEL: 'error',
    UNIFIED_API_URL: standIn.url,
    WEBHOOK_SECRET_KEY: `bench-webhook-key-${namespace}-0123456789abcdef`,
    ...(profiler ? { NODE_OPTIONS: `--import ${profiler}` } : {}),
  },
});
running.service = service;

const counter = await workCounter({ postgresServerUrl: stack.postgresServerUrl, brokers: stack.kafkaBrokers, database, namespace });
const work = counter.read;
const workLine = (name: string, before: Work, after: Work, n: number) => counter.describe(name, before, after, n, 'operation');

const untilServiceReady = () => untilReady(service.baseUrl, 120_000);

type OrderRow = { id: string; idempotency_key: string; status: string };
const totalOrders = async (tenant: Tenant): Promise<number> => {
  const r = await tenant.request<{ total: number }>('GET', '/api/v1/oms/orders?limit=1');
  if (r.status !== 200) throw new Error(`orders answered ${r.status}`);
  return r.body.total;
};
async function allOrders(tenant: Tenant): Promise<OrderRow[]> {
  const rows: OrderRow[] = [];
  for (let offset = 0; ; offset += 100) {
    const r = await tenant.request<{ data: OrderRow[]; total: number }>('GET', `/api/v1/oms/orders?limit=100&offset=${offset}`);
    if (r.status !== 200) throw new Error(`orders answered ${r.status}`);
    rows.push(...r.body.data);
    if (r.body.data.length < 100) return rows;
  }
}

const perSecond = (f: Figures) => opsPerSecond(f);
const lines: string[] = [];
const checks: string[] = [];
let failure: unknown;
const baselines: (Phase & Figures)[] = [];
let ingest: (Phase & Figures) | undefined;
let endToEnd: (Phase & Figures) | undefined;
const ingestAnswers = answers();
const baselineAnswers = answers();
try {
  const tenant = await newTenant(service.baseUrl);
  const unified = standIn.createConnection('shopify');
  await untilServiceReady();
  let saved = await tenant.request('POST', '/api/v1/integrations/callback', { connection_id: unified });
  // A loaded machine can make the ledger answer late (503); saving the same connection again is idempotent.
  for (let attempt = 1; saved.status === 503 && attempt < 5; attempt++)
    saved = await tenant.request('POST', '/api/v1/integrations/callback', { connection_id: unified });
  if (saved.status !== 201) throw new Error(`callback answered ${saved.status}: ${JSON.stringify(saved.body)}`);
  const secretAnswer = await tenant.request<{ secret: string }>('GET', '/api/v1/integrations/webhook-secret');
  if (secretAnswer.status !== 200) throw new Error(`webhook-secret answered ${secretAnswer.status}`);
  const secret = secretAnswer.body.secret;
  await untilServiceReady();

  const bench = deliveries(secret, unified, 'bench', N, REDELIVERIES);
  const warm = deliveries(secret, unified, 'warm', WARM, 1);

  // (b) the service first warmed by WARM events of their own (their orders are told apart by their external ids).
  const receiver = `${service.baseUrl}/unified/webhook`;
  const warmAnswers = answers();
  await measure('warm-up', warm.length, C, (i) => post(receiver, warm[i]!, warmAnswers));
  const deadline = Date.now() + MAP_TIMEOUT_MS;
  while ((await totalOrders(tenant)) < warmAnswers.accepted.size && Date.now() < deadline) await sleep(200);
  await untilServiceReady();

  // (a) the baseline — a bare route verifying the same HMAC and keeping each event once in a Postgres outbox, in a process
  // of its own — then the same deliveries at the same concurrency: before the service's run and again after it (the
  // service idle then too), so that a machine busy with others shows as a spread between the two. Each run has a fresh
  // outbox, warmed with as many deliveries of other events (JIT, sockets, the pool's connections).
  const warmBaseline = deliveries(secret, unified, 'warm-baseline', N, REDELIVERIES);
  const bareRun = async (when: string) => {
    const bare = await startBaselineProcess('webhook-outbox', stack.postgresServerUrl, secret);
    running.baseline = bare;
    backends.watch(bare.database);
    try {
      await measure('warm-up', warmBaseline.length, C, (i) => post(bare.url, warmBaseline[i]!, answers()));
      await sleep(2000);
      return await withCpu(['baseline', 'postgres'], () =>
        measure(`baseline: fastify + HMAC + Postgres outbox, ${when} (c=${C})`, bench.length, C, (i) =>
          post(bare.url, bench[i]!, baselineAnswers),
        ),
      );
    } finally {
      await bare.close();
      running.baseline = undefined;
    }
  };
  baselines.push(await bareRun('before'));

  const before = await work();
  const cpuBefore = readCpu(sources);
  const started = performance.now();
  ingest = await withCpu(['service', 'kafka', 'postgres'], () =>
    measure(`service: POST /unified/webhook, ${REDELIVERIES}× (c=${C})`, bench.length, C, (i) => post(receiver, bench[i]!, ingestAnswers)),
  );
  const ingested = performance.now();
  await sleep(1500); // pg_stat_database: let the backends flush their counters
  lines.push(workLine(`per delivery, receiver (the mapping already under way)`, before, await work(), bench.length));

  // (c) until every accepted event is an order.
  const expected = warmAnswers.accepted.size + ingestAnswers.accepted.size;
  let total = 0;
  while ((total = await totalOrders(tenant)) < expected && Date.now() < deadline) await sleep(100);
  const mapped = performance.now();
  const seconds = (mapped - started) / 1000;
  const endCpu = withOthers(cpuBetween(cpuBefore, readCpu(sources)));
  endToEnd = {
    name: `service: delivered → every order mapped`,
    count: N,
    seconds,
    p50: NaN,
    p99: NaN,
    cpu: endCpu,
    involved: ['service', 'kafka', 'postgres'],
  };
  cpuPhases.push(endToEnd);
  await sleep(1500);
  lines.push(workLine(`per distinct event, delivered → mapped`, before, await work(), N));
  lines.push(
    `last delivery answered at ${((ingested - started) / 1000).toFixed(1)} s, last order mapped at ${seconds.toFixed(1)} s ` +
      `(${((mapped - ingested) / 1000).toFixed(1)} s behind)`,
  );

  baselines.push(await bareRun('after'));

  // Stragglers would show by now: every delivery was answered after the inbox committed it.
  await sleep(2000);
  const orders = await allOrders(tenant);
  const keys = orders.map((o) => o.idempotency_key);
  const distinct = new Set(keys);
  const benchKeys = keys.filter((k) => k.startsWith(`unified:${unified}:bench-`));
  const missing = Array.from({ length: N }, (_, i) => `unified:${unified}:bench-${i}`).filter((k) => !distinct.has(k));
  const pending = orders.filter((o) => o.status === 'pending').length;
  checks.push(
    `orders: ${orders.length} (total ${total}) for ${expected} distinct events accepted (${N} bench + ${warmAnswers.accepted.size} warm-up); ` +
      `bench orders ${benchKeys.length}, distinct ${new Set(benchKeys).size}, duplicates ${keys.length - distinct.size}, missing ${missing.length}, pending ${pending}`,
  );
  if (keys.length !== distinct.size || missing.length > 0 || benchKeys.length !== N)
    throw new Error(`orders do not match the events: ${checks.at(-1)}; missing e.g. ${missing.slice(0, 3).join(', ')}`);
} catch (error) {
  failure = error;
} finally {
  await service.discard();
  backends.stop();
  await counter.close();
  await standIn.close();
}

const statusLine = (a: Answers, total: number) =>
  `${a.ok}/${total} answered 200 (${a.duplicates} with duplicate: true), ${a.accepted.size}/${N} distinct events accepted` +
  (a.other.size > 0 ? `; others: ${[...a.other].map(([s, n]) => `${n}× ${s}`).join(', ')}` : '');

console.log(
  `\nSigned webhook ingest: ${N} distinct accounting.order.created events (1–3 lines), each delivered ${REDELIVERIES}×, shuffled, c=${C}`,
);
console.log(
  `${'measurement'.padEnd(52)} ${'count'.padStart(6)} ${'s'.padStart(6)} ${'per s'.padStart(7)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'bare'.padStart(7)} ${'ratio'.padStart(6)}`,
);
const row = (name: string, count: number, seconds: number, p50: number, p99: number, base?: number) => {
  const rate = count / seconds;
  console.log(
    `${name.padEnd(52)} ${String(count).padStart(6)} ${seconds.toFixed(1).padStart(6)} ${rate.toFixed(0).padStart(7)} ${(Number.isNaN(p50) ? '-' : p50.toFixed(1)).padStart(7)} ` +
      `${(Number.isNaN(p99) ? '-' : p99.toFixed(1)).padStart(7)} ${(base === undefined ? '-' : base.toFixed(0)).padStart(7)} ${(base === undefined ? '-' : `${(rate / base).toFixed(2)}×`).padStart(6)}`,
  );
};
if (baselines.length > 0) {
  // The ratio is to the mean of the bare runs before and after the service's; each is printed.
  const bareRate = baselines.reduce((sum, b) => sum + perSecond(b), 0) / baselines.length;
  for (const b of baselines) row(`${b.name}`, b.count, b.seconds, b.p50, b.p99);
  row(`  bare, mean of ${baselines.length}: distinct events`, N, N / (bareRate / REDELIVERIES), NaN, NaN);
  if (ingest) {
    row(`service: deliveries`, ingest.count, ingest.seconds, ingest.p50, ingest.p99, bareRate);
    row(`service: distinct events accepted (200)`, ingestAnswers.accepted.size, ingest.seconds, NaN, NaN, bareRate / REDELIVERIES);
  }
  if (endToEnd) row(`service: distinct events, delivered → mapped`, N, endToEnd.seconds, NaN, NaN, bareRate / REDELIVERIES);
  console.log(
    `  bare:    ${statusLine(
      baselineAnswers,
      baselines.reduce((sum, b) => sum + b.count, 0),
    )}`,
  );
  if (ingest) console.log(`  service: ${statusLine(ingestAnswers, ingest.count)}`);
}
for (const line of checks) console.log(line);
console.log(`\nWhere the time goes:`);
for (const line of lines) console.log(`  ${line}`);

printCpu(cpuPhases);
const cpuOf = (p: Phase) => sumOf(p)?.toFixed(2) ?? '-';
if (baselines.length > 0 && ingest)
  console.log(
    `  per delivery: ${cpuOf(ingest)} ms (service + Kafka + Postgres) against ${baselines.map(cpuOf).join(' and ')} ms (the baseline process + Postgres); ` +
      `per distinct event delivered → mapped: ${endToEnd ? cpuOf(endToEnd) : '-'} ms`,
  );
console.log(
  `  bench: this process: the HTTP client in every row and the stand-in (idle); baseline: the outbox route, a process of its own.`,
);
if (PROFILE_DIR) console.log(`  the service's CPU profile (whole run): ${join(PROFILE_DIR, 'service.cpuprofile')}`);
console.log(
  `\nload average at the end: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')}`,
);
console.log(brokerAtStart);
if (failure) {
  console.error(failure);
  process.exit(1);
}
process.exit(0);
