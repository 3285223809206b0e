import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { quietKafka, readToEnd } from '../../ledger/kafka.ts';
import { describe, expect, inject, it } from 'vitest';
import { catalogFeedAggregate, catalogFeedIdOf } from '../../commands/ucp/catalog-feed.ts';
import { namespaced } from '../../ledger/topics.ts';
import { jobEnd, submitJob } from '../support/bulk.ts';
import type { Tenant } from '../support/client.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';
import { acpProductProblems } from '../support/acp-feed-schema.ts';
import { SELLER_LINKS, SELLER_PAGES } from '../support/feed-settings.ts';

const storageDir = mkdtempSync(path.join(tmpdir(), 'feed-store-'));
// Short debounce so the test runs in seconds; the burst test depends on these two.
const QUIET_MS = 300;
const MAX_DELAY_MS = 1_500;
const ctx = useServiceAndTenant({
  env: { STORAGE_DIR: storageDir, FEED_QUIET_MS: String(QUIET_MS), FEED_MAX_DELAY_MS: String(MAX_DELAY_MS), FEED_LINK_SECONDS: '120' },
});

const EAN13 = '4006381333931';
const EAN8 = '96385074';
const TEMPLATE = 'https://shop.example.com/products/{sku}';

type JsonLd = { '@type': string; numberOfItems: number; itemListElement: { position: number; item: Record<string, any> }[] };

/** Every tenant whose feed a test asked for: the last test checks all their current lines against the ACP schema. */
const feedTenants = new Set<Tenant>();

async function redirectOf(tenant: Tenant, path = '/api/v1/ucp/catalog.json', headers: Record<string, string> = tenant.headers) {
  feedTenants.add(tenant);
  const response = await fetch(`${ctx.service.baseUrl}${path}`, { headers, redirect: 'manual' });
  const body = response.status === 302 ? null : await response.json();
  return { status: response.status, location: response.headers.get('location'), cacheControl: response.headers.get('cache-control'), body };
}

/** The current feed: the redirect, then the file it points at. */
async function currentFeed(tenant: Tenant) {
  const redirect = await redirectOf(tenant);
  if (redirect.status !== 302 || !redirect.location) return undefined;
  const file = await fetch(redirect.location);
  expect(file.status).toBe(200);
  return { location: redirect.location, file, jsonLd: (await file.json()) as JsonLd };
}

/** Waits until the tenant's feed satisfies `ready`. */
async function feedWhere(tenant: Tenant, ready: (feed: JsonLd) => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Awaited<ReturnType<typeof currentFeed>>;
  while (Date.now() < deadline) {
    last = await currentFeed(tenant);
    if (last && ready(last.jsonLd)) return last;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`the feed did not become as expected: ${JSON.stringify(last?.jsonLd ?? null).slice(0, 2_000)}`);
}

/** The current ACP products.jsonl, every line checked against the ACP feed schema. */
async function currentLines(tenant: Tenant): Promise<Record<string, any>[]> {
  const redirect = await redirectOf(tenant, '/api/v1/ucp/product-feed.jsonl');
  expect(redirect.status).toBe(302);
  const text = await (await fetch(redirect.location as string)).text();
  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, any>);
  for (const line of lines) expect(acpProductProblems(line), JSON.stringify(line)).toEqual([]);
  return lines;
}

/** Waits until the JSON-lines sibling satisfies `ready`. */
async function linesWhere(tenant: Tenant, ready: (lines: Record<string, any>[]) => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const lines = await currentLines(tenant);
    if (ready(lines)) return lines;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error('the JSON lines did not become as expected');
}

const ids = (feed: JsonLd) => feed.itemListElement.map((e) => e.item.productID as string);
const listed = (productId: string) => (feed: JsonLd) => ids(feed).includes(productId);
const unlisted = (productId: string) => (feed: JsonLd) => !ids(feed).includes(productId);

const ok = <T>(response: { status: number; body: T }, status = 201): T => {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
};

const SELLER_SETTINGS = {
  seller_url: SELLER_PAGES.sellerUrl,
  privacy_policy_url: SELLER_PAGES.privacyPolicyUrl,
  terms_of_service_url: SELLER_PAGES.termsOfServiceUrl,
  return_policy_url: SELLER_PAGES.returnPolicyUrl,
  store_country: 'de',
  target_countries: ['DE', 'at'],
  return_window_days: 30,
  item_condition: 'new',
  shipping: { price: 4.95, currency: 'eur' },
};

async function configure(tenant: Tenant, sellerName = 'Acme Outdoor', more: Record<string, unknown> = SELLER_SETTINGS) {
  const body = { seller_name: sellerName, product_url_template: TEMPLATE, ...more };
  return ok(await tenant.request('PUT', '/api/v1/ucp/feed-settings', body), 200);
}

async function product(tenant: Tenant, body: Record<string, unknown>) {
  return ok(await tenant.request('POST', '/api/v1/pim/products', { description: 'A fine thing.', brand: 'Acme', ...body })) as {
    id: string;
  };
}

async function variant(tenant: Tenant, productId: string, body: Record<string, unknown>) {
  return ok(await tenant.request('POST', `/api/v1/pim/products/${productId}/variants`, body)) as { id: string };
}

/** CatalogFeedPublished events of one feed in the log. */
async function publicationsOf(tenant: Tenant): Promise<number> {
  const { kafkaBrokers } = inject('stack');
  const topic = namespaced(ctx.service.namespace, catalogFeedAggregate.events.name);
  const feedId = catalogFeedIdOf(tenant.tenantId, tenant.orgId);
  let count = 0;
  await readToEnd(quietKafka(kafkaBrokers, 'feed-e2e'), topic, (batch) => {
    for (const message of batch.messages) {
      if (message.key?.toString() === feedId && message.headers['event-type']?.toString() === 'CatalogFeedPublished') count += 1;
    }
  });
  return count;
}

describe('catalog feed: GET /api/v1/ucp/catalog.json', () => {
  it('redirects a new organization at once, before any catalog change, to a valid empty feed; 401 without a token', async () => {
    const fresh = await ctx.newTenant();
    const settings = ok(await fresh.request('GET', '/api/v1/ucp/feed-settings'), 200);
    expect(settings).toMatchObject({ seller_name: null, product_url_template: null, target_countries: [], published: null });
    expect((await redirectOf(fresh, '/api/v1/ucp/catalog.json', { 'x-tenant-id': fresh.tenantId, 'x-org-id': fresh.orgId })).status).toBe(
      401,
    );
    const first = await redirectOf(fresh);
    expect(first.status).toBe(302);
    expect(first.cacheControl).toBe('no-cache, no-store, must-revalidate');
    const file = await fetch(first.location as string);
    expect(file.status).toBe(200);
    expect(await file.json()).toEqual({
      '@context': 'https://schema.org',
      '@type': 'ItemList',
      itemListOrder: 'https://schema.org/ItemListUnordered',
      itemListElement: [],
      numberOfItems: 0,
    });
    expect(await currentLines(fresh)).toEqual([]);
    const published = ok(await fresh.request('GET', '/api/v1/ucp/feed-settings'), 200) as { published: Record<string, unknown> };
    expect(published.published).toMatchObject({ product_count: 0, item_count: 0 });
  });

  it('answers first requests that come at once alike, from one publication', async () => {
    const fresh = await ctx.newTenant();
    const paths = ['/api/v1/ucp/catalog.json', '/api/v1/ucp/product-feed.jsonl'];
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => redirectOf(fresh, paths[i % 2])));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(302));
    for (const path of paths) {
      const locations = answers.filter((_, i) => paths[i % 2] === path).map((a) => new URL(a.location as string).pathname);
      expect(new Set(locations).size).toBe(1);
    }
    expect(await publicationsOf(fresh)).toBe(1);
  });

  it('is described in the OpenAPI document as a 302 with its headers', async () => {
    const document = (await (await fetch(`${ctx.service.baseUrl}/openapi.json`)).json()) as { paths: Record<string, any> };
    for (const path of ['/api/v1/ucp/catalog.json', '/api/v1/ucp/product-feed.jsonl']) {
      const found = document.paths[path].get.responses['302'];
      expect(found.description).toMatch(/^Found/);
      expect(Object.keys(found.headers).sort()).toEqual(['cache-control', 'location']);
    }
    expect(document.paths['/api/v1/ucp/feed-settings'].put).toBeDefined();
  });

  it('takes feed settings, refusing a template that is not a product URL, a country that is not ISO 3166-1, a page that is not http(s)', async () => {
    const tenant = await ctx.newTenant();
    const refused = async (body: Record<string, unknown>, path: string) => {
      const answer = await tenant.request('PUT', '/api/v1/ucp/feed-settings', {
        seller_name: 'Acme',
        product_url_template: TEMPLATE,
        ...body,
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.error.code).toBe('validation_failed');
      expect(answer.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    };
    await refused({ product_url_template: 'https://shop.example.com/products' }, 'body.product_url_template');
    await refused({ seller_name: ' ' }, 'body.seller_name');
    await refused({ store_country: 'UK' }, 'body.store_country');
    await refused({ target_countries: ['DE', 'Germany'] }, 'body.target_countries.1');
    await refused({ seller_url: 'javascript:alert(1)' }, 'body.seller_url');
    await refused({ privacy_policy_url: '/privacy' }, 'body.privacy_policy_url');
    await refused({ return_window_days: 30 }, 'body.return_window_days');
    await refused({ target_countries: ['DE'], return_window_days: -1 }, 'body.return_window_days');
    await refused({ target_countries: ['DE'], shipping: { price: '4.95' } }, 'body.shipping.currency');
    await refused({ item_condition: 'mint' }, 'body.item_condition');
    const unknown = await tenant.request('PUT', '/api/v1/ucp/feed-settings', {
      seller_name: 'Acme',
      product_url_template: TEMPLATE,
      mpn: 'X',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(/unknown field mpn/);
    expect((ok(await tenant.request('GET', '/api/v1/ucp/feed-settings'), 200) as { configured_at: unknown }).configured_at).toBeNull();

    const body = await configure(tenant);
    expect(body).toMatchObject({
      seller_name: 'Acme Outdoor',
      product_url_template: TEMPLATE,
      seller_url: 'https://shop.example.com/',
      store_country: 'DE',
      target_countries: ['AT', 'DE'],
      privacy_policy_url: 'https://shop.example.com/privacy',
      terms_of_service_url: 'https://shop.example.com/terms',
      return_policy_url: 'https://shop.example.com/returns',
      return_window_days: 30,
      item_condition: 'new',
      shipping: { price: '4.95', currency: 'EUR' },
      published: null,
    });
    // Settings alone publish a first, empty, feed.
    const feed = await feedWhere(tenant, (f) => f.numberOfItems === 0);
    expect(feed.jsonLd).toMatchObject({ '@context': 'https://schema.org', '@type': 'ItemList', itemListElement: [] });
    // A PUT replaces every setting: what it leaves out is cleared.
    const plain = await configure(tenant, 'Acme Outdoor', {});
    expect(plain).toMatchObject({ seller_url: null, target_countries: [], shipping: null, item_condition: 'new' });
  });

  it('redirects to the JSON-LD (a ProductGroup with hasVariant for variants) and to the ACP lines of the same products', async () => {
    const tenant = ctx.tenant;
    await configure(tenant);
    const tent = await product(tenant, { title: 'Two-person tent', sku: 'TENT-2P', category: 'Camping > Tents' });
    const green = await variant(tenant, tent.id, { sku: 'TENT-2P-GRN', barcode: EAN13, price: '249.90', currency: 'EUR' });
    const red = await variant(tenant, tent.id, { sku: 'TENT-2P-RED', barcode: EAN8, price: '1000000.10', currency: 'EUR' });
    for (const [url, sortOrder] of [
      ['https://cdn.example.com/tent-side.jpg', 2],
      ['https://cdn.example.com/tent-front.jpg', 1],
    ] as const) {
      ok(await tenant.request('POST', '/api/v1/pim/media', { url, product_id: tent.id, sort_order: sortOrder }));
    }
    ok(await tenant.request('POST', '/api/v1/pim/media', { url: 'https://cdn.example.com/tent-red.jpg', variant_id: red.id }));
    const location = ok(await tenant.request('POST', '/api/v1/oms/inventory/locations', { name: 'Main' })) as { id: string };
    for (const [v, available] of [
      [green, 5],
      [red, 0],
    ] as const) {
      ok(await tenant.request('PUT', `/api/v1/oms/inventory/levels/${v.id}/${location.id}`, { available }), 200);
    }
    const second = ok(await tenant.request('POST', '/api/v1/oms/inventory/locations', { name: 'Second' })) as { id: string };
    ok(await tenant.request('PUT', `/api/v1/oms/inventory/levels/${red.id}/${second.id}`, { available: 0 }), 200);

    const feed = await feedWhere(tenant, (f) =>
      f.itemListElement.some(
        (e) =>
          e.item.productID === tent.id &&
          e.item.image?.length === 2 &&
          e.item.hasVariant?.[0]?.offers?.availability?.endsWith('InStock') &&
          e.item.hasVariant?.[1]?.image?.length === 1,
      ),
    );
    const redirect = await redirectOf(tenant);
    expect(redirect.status).toBe(302);
    expect(redirect.cacheControl).toBe('no-cache, no-store, must-revalidate');
    // The filesystem store: the service's own signed, time-limited link; the file itself may be cached forever.
    const link = new URL(redirect.location as string);
    expect(link.origin).toBe(ctx.service.baseUrl);
    expect(link.pathname).toMatch(new RegExp(`^/files/feeds/${tenant.tenantId}/${tenant.orgId}/[0-9a-f]{64}\\.jsonld$`));
    expect(link.searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(Number(link.searchParams.get('expires'))).toBeGreaterThan(Date.now() / 1000 + 60);
    expect(feed.file.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(feed.file.headers.get('content-type')).toContain('application/ld+json');

    const url = 'https://shop.example.com/products/TENT-2P';
    const offerTerms = {
      itemCondition: 'https://schema.org/NewCondition',
      url,
      seller: {
        '@type': 'Organization',
        name: 'Acme Outdoor',
        url: 'https://shop.example.com/',
        address: { '@type': 'PostalAddress', addressCountry: 'DE' },
      },
      shippingDetails: {
        '@type': 'OfferShippingDetails',
        shippingRate: { '@type': 'MonetaryAmount', value: '4.95', currency: 'EUR' },
        shippingDestination: [
          { '@type': 'DefinedRegion', addressCountry: 'AT' },
          { '@type': 'DefinedRegion', addressCountry: 'DE' },
        ],
      },
      hasMerchantReturnPolicy: {
        '@type': 'MerchantReturnPolicy',
        applicableCountry: ['AT', 'DE'],
        returnPolicyCategory: 'https://schema.org/MerchantReturnFiniteReturnWindow',
        merchantReturnDays: 30,
        merchantReturnLink: 'https://shop.example.com/returns',
      },
    };
    const item = feed.jsonLd.itemListElement.find((e) => e.item.productID === tent.id)?.item;
    expect(item).toEqual({
      '@type': 'ProductGroup',
      productID: tent.id,
      productGroupID: 'TENT-2P',
      name: 'Two-person tent',
      description: 'A fine thing.',
      brand: { '@type': 'Brand', name: 'Acme' },
      category: 'Camping > Tents',
      image: ['https://cdn.example.com/tent-front.jpg', 'https://cdn.example.com/tent-side.jpg'],
      url,
      hasVariant: [
        {
          '@type': 'Product',
          productID: green.id,
          name: 'Two-person tent (TENT-2P-GRN)',
          sku: 'TENT-2P-GRN',
          gtin13: EAN13,
          image: ['https://cdn.example.com/tent-front.jpg', 'https://cdn.example.com/tent-side.jpg'],
          offers: { '@type': 'Offer', price: '249.90', priceCurrency: 'EUR', availability: 'https://schema.org/InStock', ...offerTerms },
        },
        {
          '@type': 'Product',
          productID: red.id,
          name: 'Two-person tent (TENT-2P-RED)',
          sku: 'TENT-2P-RED',
          gtin8: EAN8,
          image: ['https://cdn.example.com/tent-red.jpg'],
          offers: {
            '@type': 'Offer',
            price: '1000000.10',
            priceCurrency: 'EUR',
            availability: 'https://schema.org/OutOfStock',
            ...offerTerms,
          },
        },
      ],
    });

    const sibling = await redirectOf(tenant, '/api/v1/ucp/product-feed.jsonl');
    expect(sibling.status).toBe(302);
    expect(sibling.cacheControl).toBe('no-cache, no-store, must-revalidate');
    expect(new URL(sibling.location as string).pathname).toMatch(/\.jsonl$/);
    const line = (await currentLines(tenant)).find((l) => l.id === tent.id);
    const seller = { name: 'Acme Outdoor', links: SELLER_LINKS };
    const common = { url, categories: [{ value: 'Camping > Tents', taxonomy: 'merchant' }], condition: ['new'], seller };
    expect(line).toEqual({
      id: tent.id,
      title: 'Two-person tent',
      description: { plain: 'A fine thing.' },
      url,
      media: [
        { type: 'image', url: 'https://cdn.example.com/tent-front.jpg' },
        { type: 'image', url: 'https://cdn.example.com/tent-side.jpg' },
      ],
      variants: [
        {
          id: green.id,
          title: 'Two-person tent (TENT-2P-GRN)',
          barcodes: [{ type: 'GTIN', value: EAN13 }],
          price: { amount: 24990, currency: 'EUR' },
          availability: { available: true, status: 'in_stock' },
          ...common,
        },
        {
          id: red.id,
          title: 'Two-person tent (TENT-2P-RED)',
          barcodes: [{ type: 'GTIN', value: EAN8 }],
          price: { amount: 100000010, currency: 'EUR' },
          availability: { available: false, status: 'out_of_stock' },
          media: [{ type: 'image', url: 'https://cdn.example.com/tent-red.jpg' }],
          ...common,
        },
      ],
    });

    const settings = ok(await tenant.request('GET', '/api/v1/ucp/feed-settings'), 200) as { published: Record<string, unknown> };
    expect(settings.published).toMatchObject({
      product_count: feed.jsonLd.numberOfItems,
      content_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });

    // Out of stock everywhere: marked so, and the location changes (a new content-addressed file).
    ok(await tenant.request('POST', `/api/v1/oms/inventory/levels/${green.id}/${location.id}/adjustments`, { delta: -5 }), 200);
    const soldOut = await feedWhere(tenant, (f) =>
      f.itemListElement.some((e) => e.item.productID === tent.id && e.item.hasVariant[0].offers.availability.endsWith('OutOfStock')),
    );
    expect(soldOut.location).not.toBe(feed.location);
    await linesWhere(tenant, (lines) => lines.some((l) => l.id === tent.id && l.variants[0].availability.available === false));
    // The old file is still there for whoever holds its link.
    expect((await fetch(feed.location)).status).toBe(200);
  });

  it('leaves out a product with an open ERROR issue until it is fixed, without a restart', async () => {
    const tenant = ctx.tenant;
    await configure(tenant);
    const first = await product(tenant, { title: 'Lantern', sku: 'DUP-1' });
    await variant(tenant, first.id, { sku: 'LANTERN-1', price: '19.00', currency: 'EUR' });
    await feedWhere(tenant, listed(first.id));
    // The same SKU on a second product: DUPLICATE_SKU, an ERROR, on both.
    const second = await product(tenant, { title: 'Lantern copy', sku: 'DUP-1' });
    const before = await feedWhere(tenant, (f) => unlisted(first.id)(f) && unlisted(second.id)(f));
    const issues = ok(await tenant.request('GET', '/api/v1/pim/validation'), 200) as {
      product_id: string;
      issue_type: string;
      severity: string;
    }[];
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ product_id: first.id, issue_type: 'DUPLICATE_SKU', severity: 'ERROR' }),
        expect.objectContaining({ product_id: second.id, issue_type: 'DUPLICATE_SKU', severity: 'ERROR' }),
      ]),
    );
    // Fixed: both come back, and the redirect points at a new file.
    ok(await tenant.request('PUT', `/api/v1/pim/products/${second.id}`, { sku: 'DUP-2' }), 200);
    const after = await feedWhere(tenant, (f) => listed(first.id)(f) && listed(second.id)(f));
    expect(after.location).not.toBe(before.location);

    // An invalid barcode is an ERROR too (INVALID_BARCODE): never listed.
    const badBarcode = await product(tenant, { title: 'Bad barcode', sku: 'BAD-1' });
    await variant(tenant, badBarcode.id, { sku: 'BAD-1-A', barcode: '4006381333932', price: '5.00', currency: 'EUR' });
    const marker = await product(tenant, { title: 'Marker', sku: 'MARK-1' });
    const later = await feedWhere(tenant, listed(marker.id));
    expect(ids(later.jsonLd)).not.toContain(badBarcode.id);
  });

  it('keeps listing a product whose bulk update item failed: the product is as it was, as in the export', async () => {
    const tenant = ctx.tenant;
    const kettle = await product(tenant, { title: 'Kettle', sku: 'KETTLE-1' });
    await feedWhere(tenant, listed(kettle.id));
    const submitted = await submitJob(tenant, 'BULK_UPDATE', [{ id: kettle.id, title: '' }]);
    expect((await jobEnd(tenant, submitted.body.id)).job).toMatchObject({ status: 'FAILED', failed_items: 1 });
    // The validation read model follows the bulk job's own: wait for the item's issue.
    let issues: Record<string, unknown>[] = [];
    for (let tries = 0; tries < 100 && !issues.some((issue) => issue.product_id === kettle.id); tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 200));
      issues = ok(await tenant.request('GET', '/api/v1/pim/validation'), 200) as Record<string, unknown>[];
    }
    expect(issues).toEqual(
      expect.arrayContaining([expect.objectContaining({ product_id: kettle.id, bulk_job_id: submitted.body.id, severity: 'ERROR' })]),
    );
    // A later change rebuilds the feed; the kettle is still in it.
    const marker = await product(tenant, { title: 'Marker after the bulk job', sku: 'MARK-2' });
    const later = await feedWhere(tenant, listed(marker.id));
    expect(ids(later.jsonLd)).toContain(kettle.id);
  });

  it('leaves out a DRAFT product, and lists it again once ACTIVE', async () => {
    const tenant = ctx.tenant;
    const lamp = await product(tenant, { title: 'Lamp', sku: 'LAMP-1' });
    await feedWhere(tenant, listed(lamp.id));
    ok(await tenant.request('PUT', `/api/v1/pim/products/${lamp.id}`, { status: 'DRAFT' }), 200);
    await feedWhere(tenant, unlisted(lamp.id));
    ok(await tenant.request('PUT', `/api/v1/pim/products/${lamp.id}`, { status: 'ACTIVE' }), 200);
    await feedWhere(tenant, listed(lamp.id));
  });

  it("never redirects another tenant to this tenant's file, and a link cannot be bent to another key", async () => {
    const ours = await feedWhere(ctx.tenant, (f) => f.numberOfItems > 0);
    const other = await ctx.newTenant();
    const theirs = await product(other, { title: 'Other tenant thing', sku: 'OTHER-1' });
    const otherFeed = await feedWhere(other, listed(theirs.id));
    expect(otherFeed.location).not.toBe(ours.location);
    expect(new URL(otherFeed.location).pathname).toContain(`/feeds/${other.tenantId}/${other.orgId}/`);
    expect(otherFeed.location).not.toContain(ctx.tenant.tenantId);
    expect(ids(otherFeed.jsonLd)).toEqual([theirs.id]);
    // Their signature on our key, or a made-up signature: refused.
    const bent = new URL(otherFeed.location);
    bent.pathname = new URL(ours.location).pathname;
    expect((await fetch(bent)).status).toBe(403);
    const forged = new URL(ours.location);
    forged.searchParams.set('signature', '0'.repeat(64));
    expect((await fetch(forged)).status).toBe(403);
    // Their token with our tenant's headers: refused as everywhere.
    const crossed = await redirectOf(other, '/api/v1/ucp/catalog.json', { ...other.headers, 'x-tenant-id': ctx.tenant.tenantId });
    expect([401, 403]).toContain(crossed.status);
  });

  it('loses no change to a crash before the build, and publishes each content once', async () => {
    const tenant = await ctx.newTenant();
    await configure(tenant);
    const item = await product(tenant, { title: 'Before the crash', sku: 'CRASH-1' });
    await feedWhere(tenant, listed(item.id));
    const before = await publicationsOf(tenant);
    // Killed within the quiet period: the change is in the log and the read models, not yet in the feed, and its
    // offsets are not committed.
    ok(await tenant.request('PUT', `/api/v1/pim/products/${item.id}`, { title: 'After the crash' }), 200);
    await ctx.service.kill();
    await ctx.service.restart();
    await feedWhere(tenant, (f) => f.itemListElement.some((e) => e.item.name === 'After the crash'), 60_000);
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS + 1_000));
    // Whatever was read again and rebuilt with the same content published nothing.
    expect(await publicationsOf(tenant)).toBe(before + 1);
  });

  it('builds a burst of changes a handful of times, not once per change', async () => {
    const tenant = await ctx.newTenant();
    await configure(tenant);
    const items = await Promise.all(Array.from({ length: 8 }, (_, i) => product(tenant, { title: `Burst ${i}.0`, sku: `BURST-${i}` })));
    await feedWhere(tenant, (f) => items.every((item) => listed(item.id)(f)));
    const before = await publicationsOf(tenant);
    // 8 products changed side by side, 6 times each: 48 changes as fast as the service takes them.
    const rounds = 6;
    const started = Date.now();
    await Promise.all(
      items.map(async (item, i) => {
        for (let round = 1; round <= rounds; round++)
          ok(await tenant.request('PUT', `/api/v1/pim/products/${item.id}`, { title: `Burst ${i}.${round}` }), 200);
      }),
    );
    const burstMs = Date.now() - started;
    const changes = items.length * rounds;
    await feedWhere(tenant, (f) => items.every((_, i) => f.itemListElement.some((e) => e.item.name === `Burst ${i}.${rounds}`)));
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS + 500));
    const builds = (await publicationsOf(tenant)) - before;
    console.log(`catalog feed burst: ${changes} changes over ${burstMs} ms published ${builds} times`);
    // About one per MAX_DELAY_MS of the burst, plus the one after it.
    expect(builds).toBeGreaterThanOrEqual(1);
    expect(builds, `${builds} publications for ${changes} changes over ${burstMs} ms`).toBeLessThanOrEqual(
      Math.ceil(burstMs / MAX_DELAY_MS) + 2,
    );
    expect(builds).toBeLessThan(changes / 6);
  });

  it('validates every line of every feed these tests asked for against the ACP schema', async () => {
    expect(feedTenants.size).toBeGreaterThan(0);
    for (const tenant of feedTenants) await currentLines(tenant);
  });
});
