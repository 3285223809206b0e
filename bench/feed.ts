import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { gtinCheckDigit } from '../commands/quality/gtin.ts';
import { ensureStack } from '../stack/stack.ts';
import { newTenant, type Tenant } from '../test/support/client.ts';
import { startServiceProcess, uniqueName, type Service } from '../test/support/service-process.ts';
import { readCpu } from './cpu.ts';
import { phaseLog, printCpu, sumOf, type Phase } from './cpu-report.ts';
import { measure } from './measure.ts';
import { bulkImport, importItems } from './seed.ts';
import { stackCpuSources, untilReady } from './service-work.ts';

/**
 * Issue 14's catalog feed: how long a rebuild of a tenant's feed of N products (each with a variant: price, valid
 * EAN-13, stock at one location for every other one, an image for every tenth) takes, from the change that needs it
 * (here a new seller name, which touches every product) until GET /api/v1/ucp/catalog.json redirects to the new file;
 * and the worker's own build time from its log line (read, build, gzip, write, publish; without the debounce). Beside
 * it, in the same run, Postgres building the same list in one statement (json_agg over the same read-model tables).
 */
const loadAtStart = loadavg();
const stack = await ensureStack({ log: () => undefined });
const N = Number(process.env.BENCH_FEED_PRODUCTS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_FEED_ROUNDS ?? 3);
const QUIET_MS = 1_000;
const TIMEOUT_MS = 600_000;
const TEMPLATE = 'https://shop.example.com/products/{sku}';

const running: { service?: Service } = {};
const { sources, backends } = stackCpuSources(running);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const { phases: cpuPhases, record: phaseOf } = phaseLog();
const ean13 = (i: number) => {
  const body = `40${String(i).padStart(10, '0')}`;
  return `${body}${gtinCheckDigit(body)}`;
};

const namespace = uniqueName('bench-feed');
const database = `cl_${namespace.replace(/-/g, '_')}`;
backends.watch(database);
const service = await startServiceProcess(stack, {
  namespace,
  database,
  env: { LOG_LEVEL: 'info', FEED_QUIET_MS: String(QUIET_MS), FEED_MAX_DELAY_MS: '5000' },
});
running.service = service;
const logFile = join(process.cwd(), '.stack', 'logs', 'test-services', `${namespace}.log`);

/** The worker's "catalog feed built" lines for the tenant, oldest first. */
const buildLines = (tenantId: string): { ms: number; products: number; changed: boolean }[] =>
  readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('catalog feed built') && line.includes(tenantId))
    .map((line) => JSON.parse(line) as { ms: number; products: number; changed: boolean });

type Feed = { numberOfItems: number; itemListElement: { item: { offers?: { seller?: { name: string } }[] } }[] };
async function currentFeed(tenant: Tenant): Promise<{ location: string; feed: Feed; bytes: number } | undefined> {
  const r = await fetch(`${service.baseUrl}/api/v1/ucp/catalog.json`, { headers: tenant.headers, redirect: 'manual' });
  const location = r.headers.get('location');
  if (r.status !== 302 || !location) return undefined;
  const text = await (await fetch(location)).text();
  return { location, feed: JSON.parse(text) as Feed, bytes: Buffer.byteLength(text) };
}
async function feedWhere(tenant: Tenant, ready: (feed: Feed) => boolean) {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const current = await currentFeed(tenant);
    if (current && ready(current.feed)) return current;
    if (Date.now() > deadline) throw new Error(`the feed did not show what was expected in ${TIMEOUT_MS / 1000} s`);
    await sleep(50);
  }
}
const sellerOf = (feed: Feed) => feed.itemListElement[0]?.item.offers?.[0]?.seller?.name;

let failure: unknown;
const rounds: { seconds: number; buildMs?: number; bytes: number }[] = [];
let baselinePhase: Phase | undefined;
let baselineBytes = 0;
const setup: string[] = [];
try {
  await untilReady(service.baseUrl, 120_000);
  const tenant = await newTenant(service.baseUrl);
  const put = async (sellerName: string) => {
    const r = await tenant.request('PUT', '/api/v1/ucp/feed-settings', { seller_name: sellerName, product_url_template: TEMPLATE });
    if (r.status !== 200) throw new Error(`PUT feed-settings answered ${r.status}: ${JSON.stringify(r.body)}`);
  };
  await put('Seller 0');

  // ---- The catalog: a bulk import, then a variant per product, stock and images ----
  let t0 = performance.now();
  const items = importItems(N, 'Feed bench product', 'FB', 'listed by bench/feed.ts');
  await bulkImport(tenant, items);
  setup.push(`bulk import of ${N} products: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const serviceDb = new pg.Client({ connectionString: service.databaseUrl });
  await serviceDb.connect();
  const ids = (
    await serviceDb.query<{ id: string; sku: string }>('select id, sku from rm_catalog.products where tenant_id = $1 order by sku', [
      tenant.tenantId,
    ])
  ).rows;
  const location = await tenant.request<{ id: string }>('POST', '/api/v1/oms/inventory/locations', { name: 'Main' });
  t0 = performance.now();
  const variantIds: string[] = [];
  await measure('variants', ids.length, 32, async (i) => {
    const p = ids[i] as { id: string; sku: string };
    const r = await tenant.request<{ id: string }>('POST', `/api/v1/pim/products/${p.id}/variants`, {
      sku: `${p.sku}-V`,
      barcode: ean13(i),
      price: `${(i % 500) + 1}.99`,
      currency: 'EUR',
    });
    if (r.status !== 201) throw new Error(`variant answered ${r.status}: ${JSON.stringify(r.body)}`);
    variantIds[i] = r.body.id;
    if (i % 2 === 0) {
      const level = await tenant.request('PUT', `/api/v1/oms/inventory/levels/${r.body.id}/${location.body.id}`, {
        available: 1 + (i % 9),
      });
      if (level.status !== 200) throw new Error(`level answered ${level.status}`);
    }
    if (i % 10 === 0) {
      const media = await tenant.request('POST', '/api/v1/pim/media', { url: `https://cdn.example.com/${p.sku}.jpg`, product_id: p.id });
      if (media.status !== 201) throw new Error(`media answered ${media.status}`);
    }
  });
  setup.push(
    `${N} variants, ${Math.ceil(N / 2)} stock levels, ${Math.ceil(N / 10)} images: ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  await feedWhere(tenant, (f) => f.numberOfItems === N && (f.itemListElement[0]?.item.offers?.length ?? 0) === 1);
  await untilReady(service.baseUrl, 60_000);
  await sleep(2_000);

  // ---- Rebuilds: a change that touches every product, until the new file is served ----
  for (let round = 1; round <= ROUNDS; round++) {
    const seller = `Seller ${round}`;
    const builtBefore = buildLines(tenant.tenantId).length;
    const before = readCpu(sources);
    const started = performance.now();
    await put(seller);
    const served = await feedWhere(tenant, (f) => f.numberOfItems === N && sellerOf(f) === seller);
    const seconds = (performance.now() - started) / 1000;
    phaseOf(`rebuild ${N} products: PUT → new file served`, N, seconds, before, readCpu(sources), ['service', 'kafka', 'postgres']);
    const built = buildLines(tenant.tenantId)
      .slice(builtBefore)
      .find((line) => line.changed && line.products === N);
    rounds.push({ seconds, buildMs: built?.ms, bytes: served.bytes });
    await sleep(1_500);
  }

  // ---- Baseline: Postgres builds the same list in one statement, over the same tables ----
  const before = readCpu(sources);
  const started = performance.now();
  const { rows } = await serviceDb.query<{ doc: string }>(
    `select json_build_object('@context', 'https://schema.org', '@type', 'ItemList', 'itemListElement', coalesce(json_agg(
       json_build_object('@type', 'ListItem', 'item', json_build_object('@type', 'Product', 'productID', p.id, 'name', p.title,
         'description', p.description, 'sku', p.sku, 'brand', p.brand, 'category', p.category,
         'image', (select json_agg(m.url order by m.sort_order) from rm_catalog.media m where m.product_id = p.id),
         'offers', (select json_agg(json_build_object('@type', 'Offer', 'sku', v.sku, 'gtin13', v.barcode, 'price', v.price,
             'priceCurrency', v.currency, 'availability', case when coalesce((select sum(l.available) from rm_oms.stock_levels l
             where l.variant_id = v.id), 0) > 0 then 'https://schema.org/InStock' else 'https://schema.org/OutOfStock' end)
             order by v.created_at) from rm_catalog.variants v where v.product_id = p.id)))
       order by p.id), '[]'))::text as doc
     from rm_catalog.products p
     where p.tenant_id = $1 and p.org_id = $2 and p.status = 'ACTIVE'
       and not exists (select 1 from rm_validation.validation_issues i
                       where i.product_id = p.id and not i.resolved and i.severity = 'ERROR')`,
    [tenant.tenantId, tenant.orgId],
  );
  const doc = rows[0]?.doc ?? '';
  createHash('sha256').update(doc).digest('hex');
  baselineBytes = Buffer.byteLength(doc);
  baselinePhase = phaseOf(
    `baseline: Postgres json_agg of ${N} products`,
    N,
    (performance.now() - started) / 1000,
    before,
    readCpu(sources),
    ['bench', 'postgres'],
  );
  await serviceDb.end();
} catch (error) {
  failure = error;
} finally {
  await service.discard();
  backends.stop();
}

// ---- Report ----
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
console.log(`\nCatalog feed rebuild of ${N} products (1 variant each), ${ROUNDS} rounds; FEED_QUIET_MS=${QUIET_MS}`);
console.log(`setup: ${setup.join('; ')}\n`);
console.log('| measurement | products | s (median) | s per round | products/s | worker build ms (median) | file MB |');
console.log('| --- | ---: | ---: | --- | ---: | ---: | ---: |');
if (rounds.length > 0) {
  const s = median(rounds.map((r) => r.seconds));
  const builds = rounds.flatMap((r) => (r.buildMs === undefined ? [] : [r.buildMs]));
  console.log(
    `| PUT feed-settings → new file served (includes the ${QUIET_MS} ms quiet period) | ${N} | ${s.toFixed(2)} | ` +
      `${rounds.map((r) => r.seconds.toFixed(2)).join(', ')} | ${(N / s).toFixed(0)} | ${builds.length ? median(builds).toFixed(0) : '-'} | ` +
      `${((rounds[0]?.bytes ?? 0) / 1e6).toFixed(1)} |`,
  );
}
if (baselinePhase)
  console.log(
    `| baseline: Postgres json_agg, one statement | ${N} | ${baselinePhase.seconds.toFixed(2)} | - | ` +
      `${(N / baselinePhase.seconds).toFixed(0)} | - | ${(baselineBytes / 1e6).toFixed(1)} |`,
  );
printCpu(cpuPhases);
console.log(
  `  per operation = per product. The rebuild rows include the debounce wait (idle) and the bench's polling of the redirect;\n` +
    `  the baseline reads the same tables without the quality rules (GTIN validity, URL template, JSON lines, gzip, hashing).`,
);
const sums = cpuPhases.map((p) => `${p.name}: ${sumOf(p)?.toFixed(3) ?? '-'} ms/product`);
console.log(`\n${sums.join('\n')}`);
const fmt = (l: number[]) => l.map((x) => x.toFixed(2)).join(', ');
console.log(`\nload average at the start: ${fmt(loadAtStart)}; at the end: ${fmt(loadavg())}`);
if (failure) {
  console.error(failure);
  process.exit(1);
}
process.exit(0);
