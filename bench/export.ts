import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import pg from 'pg';
import { ensureStack } from '../stack/stack.ts';
import { newTenant } from '../test/support/client.ts';
import { startServiceProcess, uniqueName } from '../test/support/service-process.ts';
import { cpuBetween, readCpu, type CpuReading } from './cpu.ts';
import { printCpu, withOthers, type Column, type Phase } from './cpu-report.ts';
import { bulkImport, importItems, mb, memoryKb } from './seed.ts';
import { stackCpuSources, untilReady } from './service-work.ts';

/**
 * Issue 14's catalog export: a tenant of N products (bulk-imported through the API), then POST /pim/export timed until
 * GET /pim/exports shows it COMPLETED, with the service's peak RSS while it runs; beside it, in the same run, what a user
 * would do instead: one query reading the same products as JSON from the read model, gzip-written to a local file.
 */
const loadAtStart = loadavg();
const stack = await ensureStack({ log: () => undefined });
const N = Number(process.env.BENCH_EXPORT_PRODUCTS ?? 100_000);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const storageDir = mkdtempSync(join(tmpdir(), 'bench-export-'));

const running: { service?: Awaited<ReturnType<typeof startServiceProcess>> } = {};
const { sources, backends } = stackCpuSources(running);
const phases: Phase[] = [];
const phase = (name: string, seconds: number, before: CpuReading, involved: Column[]) => {
  const p: Phase = { name, count: N, seconds, p50: NaN, p99: NaN, cpu: withOthers(cpuBetween(before, readCpu(sources))), involved };
  phases.push(p);
  return p;
};

const namespace = uniqueName('bench-export');
const database = `cl_${namespace.replace(/-/g, '_')}`;
backends.watch(database);
const service = await startServiceProcess(stack, { namespace, database, env: { LOG_LEVEL: 'error', STORAGE_DIR: storageDir } });
running.service = service;
const rssKb = (): number => memoryKb(service.pid()) ?? 0;

try {
  await untilReady(service.baseUrl, 60_000);
  const tenant = await newTenant(service.baseUrl);
  const items = importItems(N, 'Export bench product', 'EB', "written by bench/export.ts to measure issue 14's catalog export");
  const seedStarted = performance.now();
  await bulkImport(tenant, items);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  await untilReady(service.baseUrl, 120_000);
  await sleep(5_000); // let the quality pipeline and the feed settle, so the export runs alone
  const rssBefore = rssKb();

  // ---- The export ----
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, rssKb())), 100);
  const before = readCpu(sources);
  const started = performance.now();
  const accepted = await tenant.request<{ export_id: string }>('POST', '/api/v1/pim/export');
  if (accepted.status !== 202) throw new Error(`export answered ${accepted.status}`);
  type Listed = { id: string; status: string; product_count: number; bytes: number; error: string | null };
  let ended: Listed | undefined;
  while (!ended) {
    const listed = (await tenant.request<Listed[]>('GET', '/api/v1/pim/exports')).body.find((e) => e.id === accepted.body.export_id);
    if (listed?.status === 'COMPLETED' || listed?.status === 'FAILED') ended = listed;
    else await sleep(100);
  }
  const exportSeconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  if (ended.status !== 'COMPLETED') throw new Error(`export failed: ${ended.error}`);
  const exported = phase(`export of ${N} products (POST → COMPLETED)`, exportSeconds, before, ['bench', 'service', 'kafka', 'postgres']);

  // ---- Baseline: the same products read as JSON in one query and gzip-written to a file ----
  const client = new pg.Client({ connectionString: service.databaseUrl });
  await client.connect();
  const baselineFile = join(storageDir, 'baseline.jsonl.gz');
  const baseBefore = readCpu(sources);
  const baseStarted = performance.now();
  const { rows } = await client.query<{ line: string }>(
    `select row_to_json(p)::text as line from rm_catalog.products p where tenant_id = $1 and org_id = $2 order by id`,
    [tenant.tenantId, tenant.orgId],
  );
  const hash = createHash('sha256');
  await pipeline(
    async function* () {
      for (const row of rows) yield `${row.line}\n`;
    },
    createGzip(),
    async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        hash.update(chunk);
        yield chunk;
      }
    },
    createWriteStream(baselineFile),
  );
  const baseSeconds = (performance.now() - baseStarted) / 1000;
  await client.end();
  const baseline = phase(`baseline: one SELECT of ${rows.length} products, gzip to a file`, baseSeconds, baseBefore, ['bench', 'postgres']);

  console.log(`\nCatalog export of ${N} products (filesystem store), beside one query + gzip of the same products in the same run`);
  console.log(`seeded by a bulk import in ${seedSeconds.toFixed(1)} s\n`);
  console.log('| run | seconds | products/s | bytes | ratio to baseline |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  console.log(
    `| export | ${exported.seconds.toFixed(2)} | ${(N / exported.seconds).toFixed(0)} | ${ended.bytes} | ${(exported.seconds / baseline.seconds).toFixed(1)}× |`,
  );
  console.log(`| baseline | ${baseline.seconds.toFixed(2)} | ${(N / baseline.seconds).toFixed(0)} | ${statSync(baselineFile).size} | 1× |`);
  console.log(`\nservice VmRSS: ${mb(rssBefore)} before the export, peak ${mb(peak)} while it ran (sampled every 100 ms)`);
  printCpu(phases);
  console.log(
    `\nload average at the start: ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}; at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  await service.discard();
  rmSync(storageDir, { recursive: true, force: true });
}
process.exit(0);
