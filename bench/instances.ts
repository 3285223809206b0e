import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inventoryIdOf } from '../commands/oms/inventory.ts';
import { ensureStack } from '../stack/stack.ts';
import { newTenant, type Tenant } from '../test/support/client.ts';
import { orderRequest, stocked } from '../test/support/orders.ts';
import { call, partitionOf } from '../test/support/scale-out.ts';
import { startServiceProcess, uniqueName, type Service } from '../test/support/service-process.ts';
import { cpuBetween, processCpu, readCpu, type CpuReading, type CpuSource } from './cpu.ts';
import { printCpu, sumOf, withOthers, type Column, type Phase } from './cpu-report.ts';
import { measure, opsPerSecond } from './measure.ts';
import { stackCpuSources, untilReady } from './service-work.ts';

/**
 * Issue 16's scale-out figure: the throughput of one, two and three service instances of one namespace and database
 * (every role on each, a port each) on this machine. For each count, a fresh namespace and database; every instance
 * ready, then a warm-up, then `POST /products` (read-your-writes) and `POST /orders` (reserve + confirm), c=20,
 * round-robin over the instances. Printed: writes/s, p50 · p99, the answers that were not 2xx, CPU per write by process
 * (the instances summed), and each instance's share of the commands decided (its /metrics, before and after).
 */
const loadAtStart = loadavg();
const stack = await ensureStack({ log: () => undefined });
const COUNTS = (process.env.BENCH_INSTANCES ?? '1,2,3').split(',').map(Number);
const WRITES = Number(process.env.BENCH_WRITES ?? 3000);
const ORDERS = Number(process.env.BENCH_ORDERS ?? WRITES);
const C = Number(process.env.BENCH_CONCURRENCY ?? 20);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300); // per instance, products and orders each
const READY_MS = 120_000;
const PRODUCTS = '/api/v1/pim/products';
const ORDERS_PATH = '/api/v1/oms/orders';
const involved: Column[] = ['service', 'kafka', 'postgres'];
const logDir = join(dirname(fileURLToPath(import.meta.url)), '..', '.stack', 'logs', 'test-services');

// Kafka, Postgres, the registry, the bench and the machine, as the other benches read them; the service column is
// replaced below by the sum over the instances of the run.
const { sources: stackSources, backends } = stackCpuSources({});

/** The sum of ledger_decided_commands_total over every aggregate and outcome of one instance; undefined if it does not answer. */
async function decidedCommands(service: Service): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${service.baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
    return [...text.matchAll(/^ledger_decided_commands_total(?:\{[^}]*\})? (\S+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
  } catch {
    return undefined;
  }
}

type Row = {
  instances: number;
  phase: Phase;
  answers: Map<string, number>;
  /** CPU of each instance during the phase, ms. */
  byInstance: (number | undefined)[];
  /** Commands decided by each instance during the phase (and the asynchronous work it set off, until ready). */
  decided: (number | undefined)[];
};
const rows: Row[] = [];
const phases: Phase[] = [];
const restarts: string[] = [];

async function run(count: number): Promise<void> {
  const namespace = uniqueName(`bench-inst${count}`);
  const database = `cl_${namespace.replace(/-/g, '_')}`;
  backends.watch(database);
  const instances: Service[] = [];
  const perInstance: CpuSource[] = [];
  const total: CpuSource = {
    name: 'service',
    read: () => {
      const each = perInstance.map((source) => source.read());
      return each.some((ms) => ms === undefined) ? undefined : each.reduce((sum: number, ms) => sum + (ms ?? 0), 0);
    },
  };
  const sources = stackSources.map((source) => (source.name === 'service' ? total : source)); // and each instance's, once started
  const instanceCpu = (cpu: CpuReading) => instances.map((_, k) => cpu[`instance ${k}`]);

  /** `n` operations, c at a time, round-robin over the instances; every answer counted by status, none thrown. */
  const timed = async (name: string, n: number, send: (baseUrl: string, i: number) => Promise<number | 'unreachable'>) => {
    const answers = new Map<string, number>();
    const before = readCpu(sources);
    const figures = await measure(name, n, C, async (i) => {
      const status = String(await send(instances[i % instances.length]!.baseUrl, i));
      answers.set(status, (answers.get(status) ?? 0) + 1);
    });
    const phase: Phase = { ...figures, cpu: withOthers(cpuBetween(before, readCpu(sources))), involved };
    phases.push(phase);
    return { phase, answers };
  };
  const allReady = () => Promise.all(instances.map((service) => untilReady(service.baseUrl, READY_MS)));

  try {
    // The first creates the topics and the schemas; the others join it (as in the scale-out e2e).
    // One tenant's writes measure the instances' capacity here, not a tenant's share of it (RATE_LIMIT_TENANT_IN_FLIGHT).
    const env = { LOG_LEVEL: 'error', RATE_LIMIT_TENANT_IN_FLIGHT: '1000' };
    instances.push(await startServiceProcess(stack, { namespace, database, env }));
    const others = await Promise.allSettled(
      Array.from({ length: count - 1 }, () => startServiceProcess(stack, { namespace, database, env })),
    );
    for (const started of others) if (started.status === 'fulfilled') instances.push(started.value);
    const failed = others.find((started) => started.status === 'rejected');
    if (failed) throw failed.reason;
    instances.forEach((service, k) => perInstance.push(processCpu(`instance ${k}`, () => service.pid())));
    sources.push(...perInstance);
    await allReady();

    // One tenant for the products (each product is its own aggregate, spread over the partitions by its id). The
    // stock of a tenant is one aggregate, decided on one partition: the orders come from one tenant per partition.
    const first = instances[0]!;
    const partitions = Number(first.env.TOPIC_PARTITIONS ?? 3);
    const tenant = await newTenant(first.baseUrl);
    const byPartition = new Map<number, Tenant>();
    for (let tries = 0; byPartition.size < partitions && tries < 1000; tries++) {
      const candidate = await newTenant(first.baseUrl);
      byPartition.set(partitionOf(inventoryIdOf(candidate.tenantId, candidate.orgId), partitions), candidate);
    }
    const buyers = await Promise.all(
      [...byPartition.values()].map(async (buyer) => ({ buyer, stock: await stocked(buyer, ORDERS + WARMUP * count) })),
    );
    const postProduct = async (baseUrl: string, i: number) =>
      (await call(baseUrl, tenant, 'POST', PRODUCTS, { body: { title: `bench ${i}` } })).status;
    const postOrder = async (baseUrl: string, i: number) => {
      // Every instance meets every buyer (the buyer turns every `count` orders).
      const { buyer, stock } = buyers[Math.floor(i / count) % buyers.length]!;
      const line = { name: 'Bench mug', quantity: 1, unit_price: '9.50', variant_id: stock.variantId, location_id: stock.locationId };
      return (await call(baseUrl, buyer, 'POST', ORDERS_PATH, { body: orderRequest({ line_items: [line] }) })).status;
    };

    const label = `${count} instance${count > 1 ? 's' : ''}`;
    // V8 compiles each process's hot paths during its first few hundred writes: measured apart, and not in the table.
    await timed(`${label}: warm-up, POST /products (c=${C})`, WARMUP * count, postProduct);
    await timed(`${label}: warm-up, POST /orders (c=${C})`, WARMUP * count, postOrder);
    await allReady();

    for (const [name, n, send] of [
      ['POST /products', WRITES, postProduct],
      ['POST /orders', ORDERS, postOrder],
    ] as const) {
      const decidedBefore = await Promise.all(instances.map(decidedCommands));
      const { phase, answers } = await timed(`${label}: ${name} (c=${C})`, n, send);
      await allReady(); // the follow-up work the writes set off (e.g. quality checks) is decided by then
      const decidedAfter = await Promise.all(instances.map(decidedCommands));
      const decided = decidedAfter.map((after, k) => {
        const before = decidedBefore[k];
        return after === undefined || before === undefined ? undefined : after - before;
      });
      rows.push({ instances: count, phase, answers, byInstance: instanceCpu(phase.cpu), decided });
    }
  } finally {
    for (const service of instances.slice(1)) await service.stop();
    await instances[0]?.discard(); // the topics, the database and the state stores of every instance
    try {
      const log = readFileSync(join(logDir, `${namespace}.log`), 'utf8'); // every instance of the namespace writes here
      restarts.push(`${count}: ${log.split('\n').filter((line) => /Restarting the consumer|failed; restarting it/.test(line)).length}`);
    } catch {
      restarts.push(`${count}: no log`);
    }
  }
}

try {
  for (const count of COUNTS) await run(count);
} finally {
  backends.stop();
}

const fixed = (value: number | undefined, digits = 2) => (value === undefined ? '-' : value.toFixed(digits));
const nonOk = (answers: Map<string, number>) => {
  const failed = [...answers].filter(([status]) => !/^2\d\d$/.test(status));
  const n = failed.reduce((sum, [, k]) => sum + k, 0);
  return n === 0 ? '0' : `${n} (${failed.map(([status, k]) => `${status}×${k}`).join(', ')})`;
};
const shares = (decided: (number | undefined)[]) => {
  if (decided.some((n) => n === undefined)) return '-';
  const all = decided.reduce((sum: number, n) => sum + (n ?? 0), 0);
  return decided.map((n) => (all === 0 ? '-' : `${(((n ?? 0) / all) * 100).toFixed(0)} %`)).join(' · ') + ` (${all})`;
};
const oneInstance = (name: string) => rows.find((row) => row.instances === 1 && row.phase.name.includes(name));

console.log(
  `\nOne, two and three instances of one namespace and database (every role on each), c=${C} round-robin over them, ` +
    `after a warm-up of ${WARMUP} products and ${WARMUP} orders per instance:`,
);
console.log(
  '| instances | operation | count | ops/s | vs 1 instance | p50 · p99 ms | not 2xx | CPU ms per op: service + Kafka + Postgres | service CPU by instance, ms per op | commands decided by instance (all) |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  const { phase } = row;
  const operation = phase.name.slice(phase.name.indexOf(': ') + 2);
  const one = oneInstance(operation.split(' (')[0]!);
  const ratio = one ? `${(opsPerSecond(phase) / opsPerSecond(one.phase)).toFixed(2)}×` : '-';
  const per = (ms: number | undefined) => (ms === undefined ? undefined : ms / phase.count);
  console.log(
    `| ${row.instances} | ${operation} | ${phase.count} | ${opsPerSecond(phase).toFixed(0)}/s | ${ratio} | ${phase.p50.toFixed(1)} · ${phase.p99.toFixed(1)} | ${nonOk(row.answers)} |` +
      ` ${fixed(sumOf(phase))} (${fixed(per(phase.cpu.service))} + ${fixed(per(phase.cpu.kafka))} + ${fixed(per(phase.cpu.postgres))}) |` +
      ` ${row.byInstance.map((ms) => fixed(per(ms))).join(' · ')} | ${shares(row.decided)} |`,
  );
}
console.log(
  `\nThis machine has ${availableParallelism()} cores: the instances, Kafka, Postgres and this bench (the client) share them.` +
    ` p50 · p99 include the answers that were not 2xx; the orders come from one tenant per partition of the stock.`,
);

printCpu(phases);
console.log(
  `  service: the instances of the row, summed. others: the machine's busy time less every process above (e.g. other people's tests).`,
);
const fmt = (load: number[]) => load.map((l) => l.toFixed(2)).join(' ');
console.log(`\nconsumer restarts in the services' log, by instance count: ${restarts.join(', ')}`);
console.log(`load average at the start: ${fmt(loadAtStart)}; at the end: ${fmt(loadavg())}`);
process.exit(0);
