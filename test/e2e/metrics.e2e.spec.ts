import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

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

const scrape = async () => {
  const response = await fetch(`${ctx.service.baseUrl}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  return samplesOf(await response.text());
};

const find = (samples: Sample[], name: string, labels: Record<string, string>) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

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
    expect(find(samples, 'ledger_part_restarts', { part: 'projection-catalog' })[0]?.value).toBeGreaterThanOrEqual(0);

    // Counted in the read models at scrape time: a fresh namespace may hold none.
    for (const kind of ['push', 'inbound']) expect(find(samples, 'ledger_dead_letters', { kind })[0]?.value).toBeGreaterThanOrEqual(0);

    // Node's process metrics (prom-client's defaults).
    expect(find(samples, 'process_cpu_user_seconds_total', {})).toHaveLength(1);
    expect(find(samples, 'nodejs_heap_size_used_bytes', {})).toHaveLength(1);
  });

  it('is public and not in the OpenAPI document', async () => {
    const response = await fetch(`${ctx.service.baseUrl}/metrics`);
    expect(response.status).toBe(200);
    const openapi = (await (await fetch(`${ctx.service.baseUrl}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths)).not.toContain('/metrics');
  });
});
