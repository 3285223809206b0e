import { resolve } from 'node:path';
import { ensureStack } from '../stack/stack.ts';
import { newTenant, type Tenant } from '../test/support/client.ts';
import { orderRequest, stocked } from '../test/support/orders.ts';
import { startServiceProcess, uniqueName, type Service } from '../test/support/service-process.ts';
import { processCpu } from './cpu.ts';
import { brokerAgeLine, brokerAndPostgresCpu } from './service-work.ts';
import { percentile } from './measure.ts';

/**
 * This checkout's service against another checkout's (`BENCH_AB_OTHER=<path>`, its node_modules installed), at the same
 * time on the same machine: on a shared machine whose speed drifts from one minute to the next, two runs one after the
 * other differ by more than most changes do. Both services run side by side; each round sends `BENCH_AB_ROUND` (100)
 * POST /products to one, then the same to the other (the order alternating), at `BENCH_CONCURRENCY` (1), for
 * `BENCH_AB_ROUNDS` (10) rounds. `BENCH_AB_WRITE=orders` sends POST /orders instead (one inventory-backed line each:
 * reservation and confirmation), as `npm run bench` does. Prints each one's latency and its process's CPU per write,
 * and the broker's and Postgres's CPU during its rounds per write (the other service idles meanwhile, but for its
 * heartbeats and idle fetches, the same for both).
 */
const other = process.env.BENCH_AB_OTHER;
if (!other) throw new Error('BENCH_AB_OTHER: the path of the other checkout');
const ROUND = Number(process.env.BENCH_AB_ROUND ?? 100);
const ROUNDS = Number(process.env.BENCH_AB_ROUNDS ?? 10);
const C = Number(process.env.BENCH_CONCURRENCY ?? 1);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);
const WRITE = process.env.BENCH_AB_WRITE ?? 'products';
if (WRITE !== 'products' && WRITE !== 'orders') throw new Error('BENCH_AB_WRITE: products or orders');

type Side = {
  name: string;
  service: Service;
  tenant: Tenant;
  send: (i: number) => Promise<void>;
  latencies: number[];
  cpuMs: number;
  kafkaMs: number;
  postgresMs: number;
  seconds: number;
};

const stack = await ensureStack({ log: () => undefined });
const brokerAtStart = brokerAgeLine('when this run began');
const env = { LOG_LEVEL: 'error', RATE_LIMIT_TENANT_IN_FLIGHT: '1000' };
/** `BENCH_AB_THIS_ENV` / `BENCH_AB_OTHER_ENV`: `NAME=value` pairs, space-separated, for one side's service only. */
const sideEnv = (pairs = '') =>
  Object.fromEntries(
    pairs
      .split(' ')
      .filter(Boolean)
      .map((pair) => [pair.split('=')[0], pair.slice(pair.indexOf('=') + 1)]),
  );
const { startServiceProcess: startOther } = (await import(resolve(other, 'test/support/service-process.ts'))) as {
  startServiceProcess: typeof startServiceProcess;
};
const start = async (name: string, starter: typeof startServiceProcess, ownEnv: Record<string, string>): Promise<Side> => {
  const namespace = uniqueName(`bench-ab-${name}`);
  const service = await starter(stack, { namespace, database: `cl_${namespace.replace(/-/g, '_')}`, env: { ...env, ...ownEnv } });
  const tenant = await newTenant(service.baseUrl);
  return { name, service, tenant, send: await sender(name, tenant), latencies: [], cpuMs: 0, kafkaMs: 0, postgresMs: 0, seconds: 0 };
};
/** One write of the kind measured, answered 201. */
async function sender(name: string, tenant: Tenant): Promise<(i: number) => Promise<void>> {
  const created = (r: { status: number; body: unknown }) => {
    if (r.status !== 201) throw new Error(`${name}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  if (WRITE === 'products') return async (i) => created(await tenant.request('POST', '/api/v1/pim/products', { title: `ab ${i}` }));
  const stock = await stocked(tenant, (WARMUP + ROUND * ROUNDS) * 10);
  const line = { name: 'Bench mug', quantity: 1, unit_price: '9.50', variant_id: stock.variantId, location_id: stock.locationId };
  return async () => created(await tenant.request('POST', '/api/v1/oms/orders', orderRequest({ line_items: [line] })));
}

const sides = [
  await start('this', startServiceProcess, sideEnv(process.env.BENCH_AB_THIS_ENV)),
  await start('other', startOther, sideEnv(process.env.BENCH_AB_OTHER_ENV)),
];
const [kafkaCpu, postgresCpu] = brokerAndPostgresCpu();

/** `count` writes to `side` at concurrency C; `record` keeps their latencies and the process's CPU. */
async function writes(side: Side, count: number, record: boolean): Promise<void> {
  const cpu = processCpu(side.name, side.service.pid);
  const cpuBefore = cpu.read() ?? 0;
  const [kafkaBefore, postgresBefore] = [kafkaCpu.read() ?? 0, postgresCpu.read() ?? 0];
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < count) {
        next++;
        const sent = performance.now();
        await side.send(next);
        if (record) side.latencies.push(performance.now() - sent);
      }
    }),
  );
  if (!record) return;
  side.seconds += (performance.now() - t0) / 1000;
  side.cpuMs += (cpu.read() ?? 0) - cpuBefore;
  side.kafkaMs += (kafkaCpu.read() ?? 0) - kafkaBefore;
  side.postgresMs += (postgresCpu.read() ?? 0) - postgresBefore;
}

try {
  for (const side of sides) await writes(side, WARMUP, false);
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 ? [...sides].reverse() : sides) await writes(side, ROUND, true);
  }
  console.log(`\n${ROUNDS} rounds of ${ROUND} POST /${WRITE} at c=${C}, alternately; this: ${process.cwd()}, other: ${resolve(other)}`);
  console.log('| service | writes | writes/s | p50 ms | p90 ms | p99 ms | CPU ms per write: service | kafka | postgres |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const { name, latencies, cpuMs, kafkaMs, postgresMs, seconds } of sides) {
    latencies.sort((a, b) => a - b);
    const [p50, p90, p99] = [50, 90, 99].map((p) => percentile(latencies, p).toFixed(1));
    const [service, kafka, postgres] = [cpuMs, kafkaMs, postgresMs].map((ms) => (ms / latencies.length).toFixed(2));
    console.log(
      `| ${name} | ${latencies.length} | ${(latencies.length / seconds).toFixed(0)} | ${p50} | ${p90} | ${p99} | ${service} | ${kafka} | ${postgres} |`,
    );
  }
  console.log(brokerAtStart);
} finally {
  for (const { service } of sides) await service.discard();
}
