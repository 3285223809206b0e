import { randomUUID } from 'node:crypto';
import { GroupConsumer, logEnds, quietKafka } from '../../ledger/kafka.ts';
import { describe, expect, inject, it } from 'vitest';
import { useServiceAndTenant, type ServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();

type Sample = { name: string; labels: Record<string, string>; value: number };

/** The samples of a Prometheus text exposition (comments skipped); label values here hold no escaped quotes. */
const samplesOf = (text: string): Sample[] =>
  text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not an exposition line: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
      return { name: match[1]!, labels, value: Number(match[3]) };
    });

const scrape = async (service: ServiceAndTenant = ctx) => {
  const response = await fetch(`${service.service.baseUrl}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  return samplesOf(await response.text());
};

const find = (samples: Sample[], name: string, labels: Record<string, string>) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

/** The value of the one sample of `name` with `labels` (0 when absent). */
const valueOf = (samples: Sample[], name: string, labels: Record<string, string>) => find(samples, name, labels)[0]?.value ?? 0;

/** Scrapes until `seen` holds (gauges read from the brokers are cached 2 s; the thread's metrics follow its commits). */
async function scrapeUntil(seen: (samples: Sample[]) => boolean, service: ServiceAndTenant = ctx, deadlineMs = 60_000): Promise<Sample[]> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const samples = await scrape(service);
    if (seen(samples)) return samples;
    if (Date.now() > deadline) throw new Error('the metrics never showed what was awaited');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Writes that the product and taxonomy processors decide: `products` accepted products, one refused category (slug taken). */
async function decideSome(service: ServiceAndTenant, products: number): Promise<void> {
  for (let i = 0; i < products; i++) {
    expect(
      (await service.tenant.request('POST', '/api/v1/pim/products', { title: `Metered cup ${i}`, sku: `MTR-${randomUUID().slice(0, 8)}` }))
        .status,
    ).toBe(201);
  }
  const slug = `metered-${randomUUID().slice(0, 8)}`;
  expect((await service.tenant.request('POST', '/api/v1/pim/categories', { name: 'Metered', slug })).status).toBe(201);
  expect((await service.tenant.request('POST', '/api/v1/pim/categories', { name: 'Metered again', slug })).status).toBe(409);
}

/** The processor metrics of the product aggregate, wherever the processors run (the thread's relayed, or the main loop's). */
async function expectProcessorMetrics(service: ServiceAndTenant): Promise<void> {
  const accepted = { aggregate: 'product', outcome: 'accepted' };
  const committed = { part: 'product-processor', outcome: 'committed' };
  const before = await scrape(service);
  await decideSome(service, 3);
  const after = await scrapeUntil(
    (samples) =>
      valueOf(samples, 'ledger_decided_commands_total', accepted) >= valueOf(before, 'ledger_decided_commands_total', accepted) + 3 &&
      valueOf(samples, 'ledger_decided_commands_total', { aggregate: 'taxonomy', outcome: 'rejected' }) >= 1,
    service,
  );
  // The product's follower is decided in the same rounds.
  expect(valueOf(after, 'ledger_decided_commands_total', { aggregate: 'product-quality', outcome: 'accepted' })).toBeGreaterThanOrEqual(3);
  expect(valueOf(after, 'ledger_decide_duration_seconds_count', { aggregate: 'product' })).toBeGreaterThanOrEqual(1);
  expect(find(after, 'ledger_decide_duration_seconds_bucket', { aggregate: 'product', le: '+Inf' })).toHaveLength(1);
  expect(valueOf(after, 'ledger_round_commands_sum', { aggregate: 'product' })).toBeGreaterThanOrEqual(3);
  const transactions = valueOf(after, 'ledger_transactions_total', committed);
  expect(transactions).toBeGreaterThan(0);
  expect(valueOf(after, 'ledger_transaction_duration_seconds_count', { part: 'product-processor' })).toBeGreaterThan(0);
  // The SKU route runs in the product processor: its quality assessments (they name their SKUs) become SKU commands in the
  // same transactions, which the SKU usage processor then decides.
  const skuAccepted = { aggregate: 'sku-usage', outcome: 'accepted' };
  await scrapeUntil(
    (samples) =>
      valueOf(samples, 'ledger_decided_commands_total', skuAccepted) >= valueOf(before, 'ledger_decided_commands_total', skuAccepted) + 3,
    service,
  );
  expect(find(after, 'ledger_transactions_total', { part: 'product-processor', outcome: 'aborted' }).every((s) => s.value === 0)).toBe(
    true,
  );

  // More writes, more transactions (a counter: rate() gives transactions per second).
  await decideSome(service, 2);
  await scrapeUntil((samples) => valueOf(samples, 'ledger_transactions_total', committed) > transactions, service);
}

describe('GET /metrics', () => {
  it('holds HTTP durations by route pattern and status, command outcomes, projection lag and Node metrics', async () => {
    const created = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Metered mug' });
    expect(created.status).toBe(201);
    expect((await ctx.tenant.request('GET', `/api/v1/pim/products/${created.body.id}`)).status).toBe(200);
    expect((await ctx.tenant.request('GET', `/api/v1/pim/products/${randomUUID()}`)).status).toBe(404);

    const samples = await scrape();

    // The route's pattern, never the raw URL with the id.
    const route = '/api/v1/pim/products/:id';
    const read = find(samples, 'http_request_duration_seconds_count', { route, method: 'GET', status_code: '200' });
    expect(read).toHaveLength(1);
    expect(read[0]!.value).toBeGreaterThanOrEqual(1);
    expect(
      find(samples, 'http_request_duration_seconds_count', { route, method: 'GET', status_code: '404' })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(find(samples, 'http_request_duration_seconds_bucket', { route, method: 'GET', status_code: '200', le: '+Inf' })).toHaveLength(1);
    expect(
      find(samples, 'http_request_duration_seconds_count', { route: '/api/v1/pim/products', method: 'POST', status_code: '201' })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(samples.some((s) => s.name.startsWith('http_request_duration') && s.labels.route?.includes(created.body.id))).toBe(false);

    const commandTopic = 'catalog.product.commands.v1';
    expect(find(samples, 'ledger_commands_total', { topic: commandTopic, outcome: 'accepted' })[0]?.value).toBeGreaterThanOrEqual(1);
    expect(
      find(samples, 'ledger_command_duration_seconds_count', { topic: commandTopic, outcome: 'accepted' })[0]?.value,
    ).toBeGreaterThanOrEqual(1);

    const lag = find(samples, 'ledger_projection_lag_events', { projection: 'catalog' });
    expect(lag).toHaveLength(1);
    expect(Number.isFinite(lag[0]!.value)).toBe(true);
    expect(lag[0]!.value).toBeGreaterThanOrEqual(0);
    expect(find(samples, 'ledger_projections_lag_events', {})[0]?.value).toBeGreaterThanOrEqual(0);
    expect(find(samples, 'ledger_part_restarts', { part: 'projection-catalog+audit+validation' })[0]?.value).toBeGreaterThanOrEqual(0);

    // Counted in the read models at scrape time: a fresh namespace may hold none.
    for (const kind of ['push', 'inbound']) expect(find(samples, 'ledger_dead_letters', { kind })[0]?.value).toBeGreaterThanOrEqual(0);

    // Node's process metrics (prom-client's defaults).
    expect(find(samples, 'process_cpu_user_seconds_total', {})).toHaveLength(1);
    expect(find(samples, 'nodejs_heap_size_used_bytes', {})).toHaveLength(1);
  });

  it('measures the command processors per aggregate: decisions, outcomes, rounds and transactions (relayed from the processor thread)', async () => {
    await expectProcessorMetrics(ctx);
    const samples = await scrape();
    // One family each, though two registries (the main thread's and the processor thread's) serve them.
    for (const name of ['ledger_transactions_total', 'ledger_commands_total'])
      expect(samples.filter((s) => s.name === name).length).toBeGreaterThan(0);
    const text = await (await fetch(`${ctx.service.baseUrl}/metrics`)).text();
    expect(text.match(/^# TYPE ledger_transactions_total counter$/gm)).toHaveLength(1);
  });

  it("shows each consumer group's lag per topic and partition, which moves as the group falls behind and catches up", async () => {
    const ns = ctx.service.namespace;
    const commands = `${ns}.catalog.product.commands.v1`;
    const processor = `${ns}.commerce-ledger.product-processor`;
    for (let i = 0; i < 4; i++)
      expect((await ctx.tenant.request('POST', '/api/v1/pim/products', { title: `Lagging cup ${i}` })).status).toBe(201);

    // The product processor has committed past every command it answered: its lag comes back to 0 on each partition.
    // The projections' groups are there too, once they have committed (every 5 s: their checkpoints are their position).
    const catalogGroup = (samples: Sample[]) =>
      samples.some(
        (s) => s.name === 'ledger_consumer_lag' && s.labels.group?.startsWith(`${ns}.commerce-ledger.projection.catalog+audit+validation.`),
      );
    const caughtUp = await scrapeUntil((samples) => {
      const lags = find(samples, 'ledger_consumer_lag', { group: processor, topic: commands });
      return lags.length > 0 && lags.every((s) => s.value === 0) && catalogGroup(samples);
    });
    expect(valueOf(caughtUp, 'ledger_consumer_lag_age_seconds', {})).toBeGreaterThanOrEqual(0);
    expect(catalogGroup(caughtUp)).toBe(true);

    // A consumer of the namespace that falls behind, then catches up: the gauge follows its committed offset exactly.
    const kafka = quietKafka(inject('stack').kafkaBrokers, 'metrics-test');
    const admin = kafka.admin();
    const group = `${ns}.commerce-ledger.metrics-test-reader`;
    const consumer = new GroupConsumer(kafka, {
      groupId: group,
      topics: [commands],
      eachBatch: async () => undefined,
      onFailure: () => undefined,
    });
    await admin.connect();
    try {
      const [partition, end] = [...(await logEnds(admin, commands))]
        .map(([p, e]) => [p, Number(e)] as const)
        .reduce((a, b) => (b[1] > a[1] ? b : a));
      expect(end).toBeGreaterThan(0);
      await consumer.start();
      const labels = { group, topic: commands, partition: String(partition) };
      await consumer.commitOffsets([{ topic: commands, partitions: [{ partition, offset: '0' }] }]);
      await scrapeUntil((samples) => valueOf(samples, 'ledger_consumer_lag', labels) === end);
      await consumer.commitOffsets([{ topic: commands, partitions: [{ partition, offset: String(end) }] }]);
      await scrapeUntil((samples) => find(samples, 'ledger_consumer_lag', labels)[0]?.value === 0);
    } finally {
      await consumer.stop().catch(() => undefined);
      await admin.deleteGroups([group]).catch(() => undefined);
      await admin.disconnect();
    }
  });

  it('is public and not in the OpenAPI document', async () => {
    const response = await fetch(`${ctx.service.baseUrl}/metrics`);
    expect(response.status).toBe(200);
    const openapi = (await (await fetch(`${ctx.service.baseUrl}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths)).not.toContain('/metrics');
  });
});

describe('GET /metrics with the processors on the main loop (PROCESSORS_IN_THREAD=false)', () => {
  const main = useServiceAndTenant({ env: { PROCESSORS_IN_THREAD: 'false' } });

  it('holds the same processor metrics, measured in the main thread', async () => {
    await expectProcessorMetrics(main);
  });
});
