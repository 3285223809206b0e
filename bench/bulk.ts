import { randomBytes, randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import pg from 'pg';
import { ensureDatabase, withDatabase } from '../ledger/database.ts';
import { ensureStack } from '../stack/stack.ts';
import { newTenant, type Tenant } from '../test/support/client.ts';
import { startServiceProcess, uniqueName, type Service } from '../test/support/service-process.ts';
import { readCpu } from './cpu.ts';
import { productsTable } from './postgres-baseline.ts';
import { phaseLog, printCpu, sumOf, type Column, type Phase } from './cpu-report.ts';
import { memorySampler } from './memory-sampler.ts';
import { importItems, mb, memoryKb, rssSampler } from './seed.ts';
import { brokerAgeLine, stackCpuSources, untilReady, workCounter } from './service-work.ts';

/**
 * Issue 13's bulk jobs: a BULK_IMPORT of N products, then a BULK_UPDATE and a BULK_DELETE of some of them, each timed
 * from the POST until the job is COMPLETED and until the read model shows it, beside Postgres doing the same rows
 * directly (one `insert … select from jsonb_to_recordset`, one `update … where id = any`, one `delete … where id = any`)
 * into a plain copy of the catalog's products table in a throwaway database, in the same run.
 */
const loadAtStart = loadavg();
const stack = await ensureStack({ log: () => undefined });
const brokerAtStart = brokerAgeLine('when this run began');
const N = Number(process.env.BENCH_BULK_IMPORT ?? 100_000);
const U = Math.min(Number(process.env.BENCH_BULK_UPDATE ?? 10_000), N);
const D = Math.min(Number(process.env.BENCH_BULK_DELETE ?? 10_000), N - U);
const TIMEOUT_MS = Number(process.env.BENCH_BULK_TIMEOUT_SECONDS ?? 900) * 1000;
const SAMPLE = 100;
const UPDATED_CATEGORY = 'bench-updated';

const running: { service?: Service } = {};
const { sources, backends } = stackCpuSources(running);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const { phases: cpuPhases, record: phaseOf } = phaseLog();

const bulkItems = importItems(N, 'Bulk bench product', 'BB', "imported by bench/bulk.ts to measure issue 13's bulk jobs");

// ---- Baseline: the same rows straight into Postgres, in a throwaway database ----
const baselineMethod = 'one INSERT … SELECT FROM jsonb_to_recordset($1) (pg-copy-streams is not installed)';
const baselineDatabase = `bench_${randomBytes(5).toString('hex')}`;
backends.watch(baselineDatabase);
const baselineUrl = withDatabase(stack.postgresServerUrl, baselineDatabase);
await ensureDatabase(baselineUrl);
const baseline: { import?: Phase; update?: Phase; delete?: Phase } = {};
{
  const client = new pg.Client({ connectionString: baselineUrl });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(productsTable);
    const tenantId = randomUUID();
    const orgId = randomUUID();
    const now = new Date().toISOString();
    const ids = bulkItems.map(() => randomUUID());
    const rows = JSON.stringify(
      bulkItems.map((item, i) => ({
        id: ids[i],
        tenant_id: tenantId,
        org_id: orgId,
        ...item,
        status: 'ACTIVE',
        created_at: now,
        updated_at: now,
      })),
    );
    const timed = async (name: string, count: number, sql: string, params: unknown[]): Promise<Phase> => {
      const before = readCpu(sources);
      const started = performance.now();
      await client.query(sql, params);
      const seconds = (performance.now() - started) / 1000;
      return phaseOf(name, count, seconds, before, readCpu(sources), ['bench', 'postgres']);
    };
    baseline.import = await timed(
      `baseline: Postgres insert of ${N} rows`,
      N,
      `insert into products (id, tenant_id, org_id, title, sku, description, category, brand, status, created_at, updated_at)
       select id, tenant_id, org_id, title, sku, description, category, brand, status, created_at, updated_at
       from jsonb_to_recordset($1::jsonb) as x(id uuid, tenant_id uuid, org_id uuid, title text, sku text, description text,
         category text, brand text, status text, created_at timestamptz, updated_at timestamptz)`,
      [rows],
    );
    if (U > 0)
      baseline.update = await timed(
        `baseline: Postgres update of ${U} rows`,
        U,
        `update products set category = $1, updated_at = now() where id = any($2::uuid[])`,
        [UPDATED_CATEGORY, ids.slice(0, U)],
      );
    if (D > 0)
      baseline.delete = await timed(`baseline: Postgres delete of ${D} rows`, D, `delete from products where id = any($1::uuid[])`, [
        ids.slice(U, U + D),
      ]);
  } finally {
    await client.end();
    const admin = new pg.Client({ connectionString: withDatabase(stack.postgresServerUrl, 'postgres') });
    await admin.connect();
    await admin.query(`drop database if exists "${baselineDatabase}" with (force)`);
    await admin.end();
  }
}

// ---- The service ----
const namespace = uniqueName('bench-bulk');
const database = `cl_${namespace.replace(/-/g, '_')}`;
backends.watch(database);
const service = await startServiceProcess(stack, { namespace, database, env: { LOG_LEVEL: 'error' } });
running.service = service;
const counter = await workCounter({ postgresServerUrl: stack.postgresServerUrl, brokers: stack.kafkaBrokers, database, namespace });
const serviceDb = new pg.Client({ connectionString: service.databaseUrl });
serviceDb.on('error', () => undefined);

type JobBody = {
  id: string;
  status: 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
  total_items: number | null;
  processed_items: number | null;
  failed_items: number | null;
  errors?: { item_index: number; code: string; message: string }[];
};
type Stats = { total_products: number };

type Run = {
  label: string;
  count: number;
  postMs: number;
  bodyMb: number;
  completedS: number;
  readableS: number;
  completed: Phase;
  readable: Phase;
  peakRssKb: number;
  memory: string;
  job: JobBody;
  check: string;
  work: string;
};

/**
 * POSTs the job and times it: the POST's answer, the job's COMPLETED (polled every 100 ms) and the read model showing
 * it (`readable` is polled every 100 ms; it returns a description of what it checked once everything is there).
 */
async function runJob(
  tenant: Tenant,
  label: string,
  count: number,
  jobType: string,
  payload: unknown,
  readable: () => Promise<string | undefined>,
): Promise<Run> {
  const workBefore = await counter.read();
  const rss = rssSampler(() => service.pid());
  const memory = memorySampler(service.baseUrl, () => service.pid());
  const body = JSON.stringify({ job_type: jobType, payload });
  const before = readCpu(sources);
  const started = performance.now();
  const posted = await tenant.request<JobBody>('POST', '/api/v1/pim/bulk-jobs', { job_type: jobType, payload });
  const postMs = performance.now() - started;
  if (posted.status !== 200) throw new Error(`${label}: POST answered ${posted.status}: ${JSON.stringify(posted.body).slice(0, 500)}`);
  const deadline = Date.now() + TIMEOUT_MS;
  let job: JobBody = posted.body;
  while (job.status !== 'COMPLETED' && job.status !== 'FAILED') {
    if (Date.now() > deadline) throw new Error(`${label}: still ${job.status} after ${TIMEOUT_MS / 1000} s`);
    await sleep(100);
    const r = await tenant.request<JobBody>('GET', `/api/v1/pim/bulk-jobs/${posted.body.id}`);
    if (r.status !== 200) throw new Error(`${label}: GET job answered ${r.status}`);
    job = r.body;
  }
  const completedAt = performance.now();
  const atCompleted = readCpu(sources);
  if (job.status !== 'COMPLETED')
    throw new Error(`${label}: job ${job.status}, ${job.failed_items} failed: ${JSON.stringify(job.errors?.slice(0, 5))}`);
  let check: string | undefined;
  while (!(check = await readable())) {
    if (Date.now() > deadline) throw new Error(`${label}: the read model does not show it after ${TIMEOUT_MS / 1000} s`);
    await sleep(100);
  }
  const readableAt = performance.now();
  const atReadable = readCpu(sources);
  const peakRssKb = rss.stop();
  const memoryText = memory.stop();
  const involved: Column[] = ['service', 'kafka', 'postgres'];
  const completed = phaseOf(`${label}: POST → COMPLETED`, count, (completedAt - started) / 1000, before, atCompleted, involved);
  const shown = phaseOf(`${label}: POST → read model shows it`, count, (readableAt - started) / 1000, before, atReadable, involved);
  await sleep(1500); // pg_stat_database: let the backends flush their counters
  const work = counter.describe(label, workBefore, await counter.read(), count, 'item');
  return {
    label,
    count,
    postMs,
    bodyMb: Buffer.byteLength(body) / 1e6,
    completedS: completed.seconds,
    readableS: shown.seconds,
    completed,
    readable: shown,
    peakRssKb,
    memory: memoryText,
    job,
    check,
    work,
  };
}

const shuffled = <T>(items: T[]): T[] => {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
};

const runs: Run[] = [];
let failure: unknown;
const rssAtStart = { rss: 0 };
try {
  await serviceDb.connect();
  const tenant = await newTenant(service.baseUrl);
  await untilReady(service.baseUrl, 60_000);
  rssAtStart.rss = memoryKb(service.pid()) ?? 0;
  const stats = async () => {
    const r = await tenant.request<Stats>('GET', '/api/v1/pim/stats');
    if (r.status !== 200) throw new Error(`stats answered ${r.status}`);
    return r.body.total_products;
  };
  const productIds = async (): Promise<string[]> =>
    (await serviceDb.query<{ id: string }>('select id from rm_catalog.products where tenant_id = $1', [tenant.tenantId])).rows.map(
      (r) => r.id,
    );
  /** GET /products/{id} of each id at once: how many answered `status` (and pass `ok`, if given). */
  const spotCheck = async (ids: string[], status: number, ok?: (body: { category?: unknown } | null) => boolean) => {
    const answers = await Promise.all(ids.map((id) => tenant.request<{ category?: unknown } | null>('GET', `/api/v1/pim/products/${id}`)));
    return answers.filter((a) => a.status === status && (!ok || ok(a.body))).length;
  };

  // 1. Import.
  let ids: string[] = [];
  runs.push(
    await runJob(tenant, `BULK_IMPORT ${N}`, N, 'BULK_IMPORT', bulkItems, async () => {
      if ((await stats()) !== N) return undefined;
      ids = await productIds();
      const sample = shuffled(ids).slice(0, SAMPLE);
      const found = await spotCheck(sample, 200);
      return found === sample.length
        ? `stats.total_products = ${N}; ${found}/${sample.length} random ids (from rm_catalog.products) readable by GET /products/{id}`
        : undefined;
    }),
  );
  await untilReady(service.baseUrl, 60_000);
  const order = shuffled(ids);
  const toUpdate = order.slice(0, U);
  const toDelete = order.slice(U, U + D);

  // 2. Update, object form.
  if (U > 0) {
    const sample = toUpdate.slice(0, SAMPLE);
    runs.push(
      await runJob(tenant, `BULK_UPDATE ${U}`, U, 'BULK_UPDATE', { ids: toUpdate, set: { category: UPDATED_CATEGORY } }, async () => {
        const { rows } = await serviceDb.query<{ n: string }>(
          'select count(*) as n from rm_catalog.products where tenant_id = $1 and category = $2',
          [tenant.tenantId, UPDATED_CATEGORY],
        );
        if (Number(rows[0]?.n) !== U) return undefined;
        const found = await spotCheck(sample, 200, (body) => body?.category === UPDATED_CATEGORY);
        return found === sample.length
          ? `${U} rows of rm_catalog.products with the new category; ${found}/${sample.length} sampled by GET /products/{id}`
          : undefined;
      }),
    );
    await untilReady(service.baseUrl, 60_000);
  }

  // 3. Delete.
  if (D > 0) {
    const sample = toDelete.slice(0, SAMPLE);
    runs.push(
      await runJob(tenant, `BULK_DELETE ${D}`, D, 'BULK_DELETE', toDelete, async () => {
        if ((await stats()) !== N - D) return undefined;
        const gone = await spotCheck(sample, 404);
        return gone === sample.length ? `stats.total_products = ${N - D}; ${gone}/${sample.length} sampled ids answer 404` : undefined;
      }),
    );
  }
} catch (error) {
  failure = error;
} finally {
  const hwm = memoryKb(service.pid(), 'VmHWM');
  await serviceDb.end().catch(() => undefined);
  await service.discard(); // its topics and database too: a run leaves nothing on the shared stack
  backends.stop();
  await counter.close();
  console.log(`\nservice memory: VmRSS ${mb(rssAtStart.rss)} when ready, VmHWM (peak since start) ${mb(hwm)} at the end`);
}

// ---- Report ----
const baselineOf = (run: Run) =>
  run.label.startsWith('BULK_IMPORT') ? baseline.import : run.label.startsWith('BULK_UPDATE') ? baseline.update : baseline.delete;
const perItem = (p: Phase, column: string) => {
  const v = p.cpu[column];
  return v === undefined ? '-' : (v / p.count).toFixed(3);
};
const sumText = (p: Phase | undefined) => (p ? (sumOf(p)?.toFixed(3) ?? '-') : '-');

console.log(`\nBulk jobs beside Postgres doing the same rows (baseline: ${baselineMethod}, in a throwaway database)`);
console.log(`sizes: BENCH_BULK_IMPORT=${N} BENCH_BULK_UPDATE=${U} BENCH_BULK_DELETE=${D}\n`);
console.log(
  '| measurement | items | s | items/s | baseline s | baseline items/s | × baseline time | CPU ms/item service | kafka | postgres | (pg: run db) | sum | baseline sum (bench+pg) |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const run of runs) {
  const base = baselineOf(run);
  for (const phase of [run.completed, run.readable]) {
    console.log(
      `| ${phase.name} | ${phase.count} | ${phase.seconds.toFixed(2)} | ${(phase.count / phase.seconds).toFixed(0)} | ` +
        `${base ? base.seconds.toFixed(2) : '-'} | ${base ? (base.count / base.seconds).toFixed(0) : '-'} | ` +
        `${base ? `${(phase.seconds / base.seconds).toFixed(1)}×` : '-'} | ${perItem(phase, 'service')} | ${perItem(phase, 'kafka')} | ` +
        `${perItem(phase, 'postgres')} | (${perItem(phase, 'pg: run db')}) | ${sumText(phase)} | ${sumText(base)} |`,
    );
  }
}
console.log(`\nPer job:`);
for (const run of runs)
  console.log(
    `  ${run.label}: POST answered in ${run.postMs.toFixed(0)} ms (body ${run.bodyMb.toFixed(2)} MB); job ${run.job.status}, ` +
      `processed ${run.job.processed_items}/${run.job.total_items}, failed ${run.job.failed_items}; COMPLETED at ${run.completedS.toFixed(2)} s, ` +
      `read model at ${run.readableS.toFixed(2)} s (${(run.readableS - run.completedS).toFixed(2)} s later); service peak VmRSS during the job ` +
      `${mb(run.peakRssKb)}\n    memory ${run.memory}\n    read model check: ${run.check}`,
  );
console.log(`\nWhere the time goes:`);
for (const run of runs) console.log(`  ${run.work}`);

printCpu(cpuPhases);
console.log(
  `  bench: this process: in the baseline rows the pg client sending the rows' JSON (built before timing); in the bulk rows the POST\n` +
    `  (its JSON built inside the timing) and the polling of the job and the read model. Per operation = per item. Kafka and Postgres\n` +
    `  are shared: their figures include whatever else used them; the others column shows how busy the rest of the machine was.`,
);
const fmt = (l: number[]) => l.map((x) => x.toFixed(2)).join(', ');
console.log(`\nload average at the start: ${fmt(loadAtStart)}; at the end: ${fmt(loadavg())}`);
console.log(brokerAtStart);
if (failure) {
  console.error(failure);
  process.exit(1);
}
process.exit(0);
