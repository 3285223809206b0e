import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { ensureStack } from '../stack/stack.ts';
import { newTenant } from '../test/support/client.ts';
import { orderRequest, stocked } from '../test/support/orders.ts';
import { startServiceProcess } from '../test/support/service-process.ts';

/**
 * Each figure of the service is printed beside a baseline measured in the same run on the same
 * machine: a bare fastify route for HTTP, a raw kafkajs produce→consume round trip for Kafka.
 */
type Figures = { name: string; count: number; seconds: number; p50: number; p99: number };

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function measure(name: string, count: number, concurrency: number, once: (i: number) => Promise<void>): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        await once(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { name, count, seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

const print = (rows: Figures[]) => {
  console.log(`${'measurement'.padEnd(58)} ${'ops'.padStart(6)} ${'ops/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`);
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(58)} ${String(r.count).padStart(6)} ${(r.count / r.seconds).toFixed(0).padStart(8)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)}`,
    );
  }
};

async function expectStatus(response: Promise<Response>, status: number): Promise<void> {
  const r = await response;
  await r.arrayBuffer();
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}`);
}

const stack = await ensureStack({ log: () => undefined });
const rows: Figures[] = [];
const N = Number(process.env.BENCH_REQUESTS ?? 1000);
const C = Number(process.env.BENCH_CONCURRENCY ?? 20);

// Baseline: a bare fastify route doing nothing but answer.
const bare = Fastify();
bare.post('/products', async (_request, reply) => reply.code(201).send({ id: randomUUID() }));
await bare.listen({ port: 0, host: '127.0.0.1' });
const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;
rows.push(
  await measure(`baseline: bare fastify POST (c=${C})`, N * 2, C, () =>
    expectStatus(
      fetch(`${bareUrl}/products`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"title":"x"}' }),
      201,
    ),
  ),
);
await bare.close();

// Baseline: raw kafkajs produce → consume round trip (acks=all, read_committed consumer).
const kafka = new Kafka({ brokers: stack.kafkaBrokers, clientId: 'bench', logLevel: logLevel.NOTHING });
const topic = `bench-${randomUUID()}`;
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
const consumer = kafka.consumer({ groupId: `bench-${randomUUID()}`, maxWaitTimeInMs: 100 });
await Promise.all([producer.connect(), consumer.connect()]);
await consumer.subscribe({ topic, fromBeginning: true });
const arrivals = new Map<string, () => void>();
await consumer.run({ eachMessage: async ({ message }) => arrivals.get(message.key?.toString() ?? '')?.() });
await new Promise((r) => setTimeout(r, 2000)); // let the group settle before timing
rows.push(
  await measure(`baseline: raw kafkajs produce→consume round trip (c=${C})`, N, C, async (i) => {
    const key = `k${i}`;
    const arrived = new Promise<void>((resolve) => arrivals.set(key, resolve));
    await producer.send({ topic, acks: -1, messages: [{ key, value: 'x' }] });
    await arrived;
  }),
);
await Promise.all([producer.disconnect(), consumer.disconnect()]);
await admin.deleteTopics({ topics: [topic] });
await admin.disconnect();

// The service: command → transactional decision → projection → answer from the read model.
const service = await startServiceProcess(stack, { env: { LOG_LEVEL: 'error' } });
try {
  const tenant = await newTenant(service.baseUrl);
  const ids: string[] = [];
  rows.push(
    await measure(`service: POST /products, read-your-writes (c=${C})`, N, C, async (i) => {
      const r = await tenant.request('POST', '/api/v1/pim/products', { title: `bench ${i}` });
      if (r.status !== 201) throw new Error(`create answered ${r.status}`);
      ids.push(r.body.id);
    }),
  );
  rows.push(
    await measure(`service: GET /products/{id} (c=${C})`, N * 2, C, (i) =>
      expectStatus(fetch(`${service.baseUrl}/api/v1/pim/products/${ids[i % ids.length]}`, { headers: tenant.headers }), 200),
    ),
  );
  // An order with one inventory-backed line: idempotent order id, reservation, payment check, confirmation.
  const stock = await stocked(tenant, N * 10);
  rows.push(
    await measure(`service: POST /orders, reserve + confirm (c=${C})`, N, C, async () => {
      const line = { name: 'Bench mug', quantity: 1, unit_price: '9.50', variant_id: stock.variantId, location_id: stock.locationId };
      const r = await tenant.request('POST', '/api/v1/oms/orders', orderRequest({ line_items: [line] }));
      if (r.status !== 201) throw new Error(`order answered ${r.status}: ${JSON.stringify(r.body)}`);
    }),
  );
  rows.push(
    await measure(`service: POST /products, one at a time (c=1)`, Math.min(N, 200), 1, async (i) => {
      const r = await tenant.request('POST', '/api/v1/pim/products', { title: `serial ${i}` });
      if (r.status !== 201) throw new Error(`create answered ${r.status}`);
    }),
  );
} finally {
  await service.stop();
}
print(rows);
// A consumer that crashes and restarts under ordinary load is a stall of a second or more in some requests' path.
const serviceLog = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), '..', '.stack', 'logs', 'test-services', `${service.namespace}.log`),
  'utf8',
);
const restarts = serviceLog.split('\n').filter((line) => /Restarting the consumer|failed; restarting it/.test(line)).length;
console.log(`consumer restarts in the service log during the run: ${restarts}`);
process.exit(0);
