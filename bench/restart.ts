import { quietKafka, readToEnd } from '../ledger/kafka.ts';
import { productAggregate } from '../commands/catalog/product.ts';
import { productQualityAggregate } from '../commands/quality/product-quality.ts';
import { namespaced } from '../ledger/topics.ts';
import { ensureStack } from '../stack/stack.ts';
import { newTenant } from '../test/support/client.ts';
import { startServiceProcess, uniqueName } from '../test/support/service-process.ts';
import { cpuBetween, readCpu } from './cpu.ts';
import { bulkImport, importItems, mb, memoryKb, rssSampler } from './seed.ts';
import { stackCpuSources, untilReady } from './service-work.ts';

/**
 * Issue 16's restart figure: a service holding N products (bulk-imported) is stopped (SIGTERM, and SIGKILL: issue 28)
 * and started again, timed until GET /health answers, until its first product write is accepted (201) and until GET
 * /health/ready (every processor has restored its partitions, every consumer caught up), with the service's RSS before
 * the stop, at ready and at its peak during the restore, and its CPU for the restart; once with each state store
 * (BENCH_RESTART_STORES, default `lmdb,memory`: the local LMDB store, which reads only the changelogs' tail, and every
 * snapshot in memory, read from the whole changelogs). Beside it, in the same run, the least a whole read does: a bare
 * reader (the port's partition reader) in the bench process reading the product and product-quality state changelogs
 * to their ends and parsing every record.
 */
const stack = await ensureStack({ log: () => undefined });
const N = Number(process.env.BENCH_RESTART_PRODUCTS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_RESTART_ROUNDS ?? 2);
const STORES = (process.env.BENCH_RESTART_STORES ?? 'lmdb,memory').split(',');
/** How the service goes down: SIGTERM (a deploy) or SIGKILL (a crash: its groups' members and transactions left open). */
const SIGNALS = (process.env.BENCH_RESTART_SIGNALS ?? 'SIGTERM,SIGKILL').split(',') as ('SIGTERM' | 'SIGKILL')[];
/** VmRSS, and of it the anonymous memory (heaps) and the file pages mapped (the LMDB store's, reclaimable page cache). */
const rssParts = (pid: number | undefined): string =>
  `${mb(memoryKb(pid))} (anonymous ${mb(memoryKb(pid, 'RssAnon'))}, file ${mb(memoryKb(pid, 'RssFile'))})`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const seconds = (from: number) => ((performance.now() - from) / 1000).toFixed(1);

const namespace = uniqueName('bench-restart');
const database = `cl_${namespace.replace(/-/g, '_')}`;
const running: { service?: Awaited<ReturnType<typeof startServiceProcess>> } = {};
const { sources, backends } = stackCpuSources(running);
backends.watch(database);
const service = await startServiceProcess(stack, { namespace, database, env: { LOG_LEVEL: 'error', STATE_STORE: STORES[0] ?? 'lmdb' } });
running.service = service;

/** Reads the state changelogs to their ends in the bench process: records, and parsed records per second. */
async function readChangelogs(): Promise<{ records: number; seconds: number }> {
  const kafka = quietKafka(stack.kafkaBrokers, 'bench-restart');
  const topics = [productAggregate.state, productQualityAggregate.state].map((t) => namespaced(namespace, t.name));
  let records = 0;
  const started = performance.now();
  await Promise.all(
    topics.map((topic) =>
      readToEnd(kafka, topic, (batch) => {
        for (const message of batch.messages) {
          if (message.value) JSON.parse(message.value.toString());
          records += 1;
        }
      }),
    ),
  );
  const elapsed = (performance.now() - started) / 1000;
  return { records, seconds: elapsed };
}

try {
  await untilReady(service.baseUrl, 120_000);
  const tenant = await newTenant(service.baseUrl);
  const items = importItems(N, 'Restart bench product', 'RB', 'written by bench/restart.ts');
  const seeding = performance.now();
  await bulkImport(tenant, items);
  await untilReady(service.baseUrl, 600_000);
  console.log(
    `${N} products imported in ${seconds(seeding)} s; service RSS ${rssParts(service.pid())}, peak ${mb(memoryKb(service.pid(), 'VmHWM'))} (store ${service.env.STATE_STORE})`,
  );
  await sleep(5_000);

  const rows: string[] = [];
  const plan = STORES.flatMap((store) => SIGNALS.flatMap((signal) => Array.from({ length: ROUNDS }, () => ({ store, signal }))));
  for (const [round, { store, signal }] of plan.entries()) {
    // The next start's store (the same object is the running process's environment).
    service.env.STATE_STORE = store;
    const baseline = await readChangelogs();
    const rssBefore = memoryKb(service.pid());
    await (signal === 'SIGKILL' ? service.kill() : service.stop());
    const sampler = rssSampler(() => service.pid(), 100);
    const cpuBefore = readCpu(sources);
    const started = performance.now();
    await service.restart();
    const healthS = seconds(started);
    const serving = performance.now();
    // The first write after the new process serves: accepted once its processor decides it and the read model has it.
    const write = await tenant.request('POST', '/api/v1/pim/products', {
      title: `Restart write ${round}`,
      sku: `RB-W-${round}-${Date.now()}`,
      description: 'the first write after the restart',
    });
    if (write.status !== 201) throw new Error(`the first write after the restart answered ${write.status}`);
    const writeS = seconds(serving);
    await untilReady(service.baseUrl, 900_000);
    const readyS = seconds(started);
    const readyAfterServingS = seconds(serving);
    const cpuAfter = readCpu(sources);
    const kafkaMs = cpuBetween(cpuBefore, cpuAfter).kafka ?? 0;
    // A new process: all its CPU since it started is the restart's.
    const serviceMs = cpuAfter.service ?? 0;
    const peak = sampler.stop();
    const rssReady = rssParts(service.pid());
    rows.push(
      `| ${round + 1} | ${store} | ${signal} | ${healthS} s | ${readyS} s (${readyAfterServingS} s after serving) | ${writeS} s | ${baseline.seconds.toFixed(1)} s (${baseline.records} records) | ${mb(rssBefore)} | ${rssReady} | ${mb(peak)} | ${(serviceMs / 1000).toFixed(1)} s · ${(kafkaMs / 1000).toFixed(1)} s |`,
    );
    await sleep(5_000);
  }
  console.log(`\nRestart of a service holding ${N} products (stopped by the signal, started again):`);
  console.log(
    '| round | state store | signal | to /health | to /health/ready | first write accepted, after serving | baseline: bare consumer reads the product and quality state changelogs | RSS before the stop | RSS at ready | peak RSS during the restart | CPU service · Kafka |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
} finally {
  await service.discard();
  backends.stop();
}
process.exit(0);
