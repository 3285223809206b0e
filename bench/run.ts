import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { GroupConsumer, keyedProducer, quietKafka } from '../ledger/kafka.ts';
import { ensureStack } from '../stack/stack.ts';
import { newTenant } from '../test/support/client.ts';
import { orderRequest, stocked } from '../test/support/orders.ts';
import { startServiceProcess, uniqueName, type Service } from '../test/support/service-process.ts';
import { cpuBetween, readCpu, type CpuReading } from './cpu.ts';
import { percentOfCore, printCpu, sumOf, withOthers, type Column, type Phase } from './cpu-report.ts';
import { expectStatus, measure, opsPerSecond, printFigures } from './measure.ts';
import { startBaselineProcess } from './baseline-process.ts';
import { brokerAgeLine, stackCpuSources } from './service-work.ts';

/**
 * Each figure of the service is printed beside a baseline measured in the same run on the same machine: a bare
 * fastify route for HTTP, a raw kafkajs produce→consume round trip for Kafka, a bare fastify route over Postgres
 * (insert the product row, read it back) for what users would pick instead; and the CPU each costs, by process.
 */
const stack = await ensureStack({ log: () => undefined });
const brokerAtStart = brokerAgeLine('when this run began');
const N = Number(process.env.BENCH_REQUESTS ?? 1000);
const C = Number(process.env.BENCH_CONCURRENCY ?? 20);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1000);

// The processes whose CPU is read from /proc.
const running: { service?: Service; baseline?: { pid: number } } = {}; // each from when it has started
const { sources, backends } = stackCpuSources(running);
const cpuOf = async (run: () => Promise<void>): Promise<CpuReading> => {
  const before = readCpu(sources);
  await run();
  return withOthers(cpuBetween(before, readCpu(sources)));
};

const phases: Phase[] = [];
async function phase(
  name: string,
  count: number,
  concurrency: number,
  involved: Column[],
  once: (i: number) => Promise<void>,
): Promise<Phase> {
  const before = readCpu(sources);
  const figures = await measure(name, count, concurrency, once);
  const measured: Phase = { ...figures, cpu: withOthers(cpuBetween(before, readCpu(sources))), involved };
  phases.push(measured);
  return measured;
}
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// Baseline: a bare fastify route doing nothing but answer.
const bare = Fastify();
bare.post('/products', async (_request, reply) => reply.code(201).send({ id: randomUUID() }));
await bare.listen({ port: 0, host: '127.0.0.1' });
const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;
await phase(`baseline: bare fastify POST (c=${C})`, N * 2, C, ['bench'], () =>
  expectStatus(
    fetch(`${bareUrl}/products`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"title":"x"}' }),
    201,
  ),
);
await bare.close();

// Baseline: the Kafka port's produce → consume round trip (acks=all, read_committed consumer).
const kafka = quietKafka(stack.kafkaBrokers, 'bench');
const topic = `bench-${randomUUID()}`;
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
// Not idempotent: concurrent sends of one idempotent producer of the client race their sequence numbers.
const producer = keyedProducer(kafka);
const arrivals = new Map<string, () => void>();
const consumer = new GroupConsumer(kafka, {
  groupId: `bench-${randomUUID()}`,
  topics: [topic],
  eachBatch: async (batch) => {
    for (const message of batch.messages) arrivals.get(message.key?.toString() ?? '')?.();
  },
  onFailure: (error) => console.error('bench consumer failed', error),
});
await Promise.all([producer.connect(), consumer.start()]);
await sleep(2000); // let the group settle before timing
await phase(`baseline: the Kafka port's produce→consume round trip (c=${C})`, N, C, ['bench', 'kafka'], async (i) => {
  const key = `k${i}`;
  const arrived = new Promise<void>((resolve) => arrivals.set(key, resolve));
  await producer.send({ topic, messages: [{ key, value: 'x' }] });
  await arrived;
});
await Promise.all([producer.disconnect(), consumer.stop()]);
await admin.deleteTopics({ topics: [topic] });
await admin.disconnect();

// Baseline: what users would pick instead, a bare fastify route inserting the product row into Postgres and reading it back.
const baseline = await startBaselineProcess('products', stack.postgresServerUrl);
backends.watch(baseline.database);
running.baseline = baseline;
const baselineHeaders = { 'content-type': 'application/json', 'x-tenant-id': randomUUID(), 'x-org-id': randomUUID() };
const postToBaseline = (i: number) =>
  expectStatus(
    fetch(`${baseline.url}/products`, { method: 'POST', headers: baselineHeaders, body: JSON.stringify({ title: `bench ${i}` }) }),
    201,
  );
for (let i = 0; i < C; i++) await postToBaseline(-1 - i); // opens the pool's connections, as the service's are open once it is up
const postgresBaseline = await phase(
  `baseline: bare fastify + Postgres insert + read back (c=${C})`,
  N,
  C,
  ['baseline', 'postgres'],
  postToBaseline,
);
await baseline.close();

// The stack at rest without this service (others' work on the machine included), beside the service's idle below.
const stackIdle = await cpuOf(() => sleep(IDLE_SECONDS * 1000));

// The service: command → transactional decision → projection → answer from the read model.
const namespace = uniqueName('bench');
const database = `cl_${namespace.replace(/-/g, '_')}`;
backends.watch(database);
// One tenant's writes measure the pipeline's capacity here, not a tenant's share of it (RATE_LIMIT_TENANT_IN_FLIGHT).
const service = await startServiceProcess(stack, { namespace, database, env: { LOG_LEVEL: 'error', RATE_LIMIT_TENANT_IN_FLIGHT: '1000' } });
running.service = service;
let serviceIdle: CpuReading | undefined;
let ready = false;
const serviceColumns: Column[] = ['service', 'kafka', 'postgres'];
try {
  const tenant = await newTenant(service.baseUrl);
  // A freshly started process spends its first thousand or so writes compiling (V8's optimising compiler runs on
  // threads of the service's own): measured apart, the rows below are the service warmed up.
  await phase(`service: POST /products, the first ${WARMUP} after start (c=${C})`, WARMUP, C, serviceColumns, async (i) => {
    const r = await tenant.request('POST', '/api/v1/pim/products', { title: `warm-up ${i}` });
    if (r.status !== 201) throw new Error(`create answered ${r.status}`);
  });
  const ids: string[] = [];
  const products = await phase(`service: POST /products, read-your-writes (c=${C})`, N, C, serviceColumns, async (i) => {
    const r = await tenant.request('POST', '/api/v1/pim/products', { title: `bench ${i}` });
    if (r.status !== 201) throw new Error(`create answered ${r.status}`);
    ids.push(r.body.id);
  });
  await phase(`service: GET /products/{id} (c=${C})`, N * 2, C, serviceColumns, (i) =>
    expectStatus(fetch(`${service.baseUrl}/api/v1/pim/products/${ids[i % ids.length]}`, { headers: tenant.headers }), 200),
  );
  // An order with one inventory-backed line: idempotent order id, reservation, payment check, confirmation.
  const stock = await stocked(tenant, (WARMUP + N) * 10);
  const order = async () => {
    const line = { name: 'Bench mug', quantity: 1, unit_price: '9.50', variant_id: stock.variantId, location_id: stock.locationId };
    const r = await tenant.request('POST', '/api/v1/oms/orders', orderRequest({ line_items: [line] }));
    if (r.status !== 201) throw new Error(`order answered ${r.status}: ${JSON.stringify(r.body)}`);
  };
  // The order path's code and topics are first used here: its first writes measured apart, as the products' are.
  await phase(`service: POST /orders, the first ${WARMUP} (c=${C})`, WARMUP, C, serviceColumns, order);
  await phase(`service: POST /orders, reserve + confirm (c=${C})`, N, C, serviceColumns, order);
  await phase(`service: POST /products, one at a time (c=1)`, Math.min(N, 200), 1, serviceColumns, async (i) => {
    const r = await tenant.request('POST', '/api/v1/pim/products', { title: `serial ${i}` });
    if (r.status !== 201) throw new Error(`create answered ${r.status}`);
  });

  // Idle: once every consumer has caught up (ready), no traffic at all for IDLE_SECONDS.
  const deadline = Date.now() + 30_000;
  while (!ready && Date.now() < deadline) {
    ready = await fetch(`${service.baseUrl}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (!ready) await sleep(250);
  }
  serviceIdle = await cpuOf(() => sleep(IDLE_SECONDS * 1000));

  printFigures(phases);
  console.log(
    `\nPOST /products (c=${C}) against the Postgres baseline: ${opsPerSecond(products).toFixed(0)} / ${opsPerSecond(postgresBaseline).toFixed(0)} ops/s` +
      ` = ${(opsPerSecond(products) / opsPerSecond(postgresBaseline)).toFixed(2)}×;` +
      ` CPU per write ${sumOf(products)?.toFixed(2) ?? '-'} ms (service + Kafka + Postgres) against ${sumOf(postgresBaseline)?.toFixed(2) ?? '-'} ms (baseline process + Postgres)`,
  );
} finally {
  await service.discard(); // its topics and database too: a run leaves nothing on the shared stack
  backends.stop();
}

printCpu(phases);
console.log(
  `  bench: this process: the HTTP client (load generator) in every row, and the bare fastify and Kafka baselines' own work.\n` +
    `  baseline: the Postgres baseline server, a process of its own as the service is (bench/baseline-server.ts).\n` +
    `  postgres: every process named postgres on the machine (postmaster, background processes, every backend of every database,\n` +
    `  others' included), with exited backends counted through the postmaster's cutime/cstime. pg: run db: the part of it spent by\n` +
    `  backends of this run's databases (the service's, the baseline's), sampled every 250 ms by process title.\n` +
    `  others: the machine's busy time less every process above (e.g. other people's tests and services on this machine).`,
);

console.log(`\nIdle, % of one core over ${IDLE_SECONDS} s without traffic:`);
console.log(
  `  stack without this service (before it started): kafka ${percentOfCore(stackIdle.kafka, IDLE_SECONDS)}, postgres ${percentOfCore(stackIdle.postgres, IDLE_SECONDS)},` +
    ` registry ${percentOfCore(stackIdle.registry, IDLE_SECONDS)}, others ${percentOfCore(stackIdle.others, IDLE_SECONDS)}`,
);
if (serviceIdle)
  console.log(
    `  service started, writes done${ready ? ', ready' : ', NOT ready after 30 s'}: service ${percentOfCore(serviceIdle.service, IDLE_SECONDS)},` +
      ` kafka ${percentOfCore(serviceIdle.kafka, IDLE_SECONDS)}, postgres ${percentOfCore(serviceIdle.postgres, IDLE_SECONDS)}` +
      ` (its database's backends ${percentOfCore(serviceIdle['pg: run db'], IDLE_SECONDS)}), registry ${percentOfCore(serviceIdle.registry, IDLE_SECONDS)},` +
      ` others ${percentOfCore(serviceIdle.others, IDLE_SECONDS)}`,
  );

// A consumer that crashes and restarts under ordinary load is a stall of a second or more in some requests' path.
const serviceLog = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), '..', '.stack', 'logs', 'test-services', `${service.namespace}.log`),
  'utf8',
);
const restarts = serviceLog.split('\n').filter((line) => /Restarting the consumer|failed; restarting it/.test(line)).length;
console.log(`\nconsumer restarts in the service log during the run: ${restarts}`);
console.log(brokerAtStart);
process.exit(0);
