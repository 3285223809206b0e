import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { S3PROXY_ACCESS_KEY_ID, S3PROXY_SECRET_ACCESS_KEY } from '../../stack/s3/s3proxy.ts';
import { acpProductProblems } from '../support/acp-feed-schema.ts';
import type { Tenant } from '../support/client.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant(() => ({
  env: {
    S3_ENDPOINT: inject('stack').s3Endpoint,
    S3_BUCKET: `feeds-${randomUUID()}`,
    S3_ACCESS_KEY_ID: S3PROXY_ACCESS_KEY_ID,
    S3_SECRET_ACCESS_KEY: S3PROXY_SECRET_ACCESS_KEY,
    FEED_QUIET_MS: '300',
    FEED_MAX_DELAY_MS: '1500',
    FEED_KEEP_REPLACED_SECONDS: '2',
  },
}));

async function redirectOf(tenant: Tenant, path: string) {
  const response = await fetch(`${ctx.service.baseUrl}${path}`, { headers: tenant.headers, redirect: 'manual' });
  return { status: response.status, location: response.headers.get('location'), cacheControl: response.headers.get('cache-control') };
}

describe('catalog feed on S3 (the local S3-compatible server)', () => {
  it('redirects to presigned links at the bucket, which serve the files and refuse a tampered signature', async () => {
    const tenant = ctx.tenant;
    const configured = await tenant.request('PUT', '/api/v1/ucp/feed-settings', {
      seller_name: 'Acme',
      product_url_template: 'https://shop.example.com/p/{id}',
    });
    expect(configured.status).toBe(200);
    const created = await tenant.request('POST', '/api/v1/pim/products', { title: 'Kettle', description: 'Boils.', brand: 'Acme' });
    expect(created.status).toBe(201);
    const productId = (created.body as { id: string }).id;
    const variant = await tenant.request('POST', `/api/v1/pim/products/${productId}/variants`, {
      sku: 'K-1',
      price: '39.00',
      currency: 'EUR',
    });
    expect(variant.status).toBe(201);

    const deadline = Date.now() + 30_000;
    let feed: { itemListElement: { item: { productID: string; url: string; offers: { price: string }[] } }[] } | undefined;
    let location = '';
    while (Date.now() < deadline) {
      const redirect = await redirectOf(tenant, '/api/v1/ucp/catalog.json');
      if (redirect.status === 302 && redirect.location) {
        expect(redirect.cacheControl).toBe('no-cache, no-store, must-revalidate');
        location = redirect.location;
        const file = await fetch(location);
        expect(file.status).toBe(200);
        feed = (await file.json()) as typeof feed;
        if (feed?.itemListElement.some((e) => e.item.productID === productId && e.item.offers?.length === 1)) break;
      }
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    const item = feed?.itemListElement.find((e) => e.item.productID === productId)?.item;
    expect(item).toMatchObject({ url: `https://shop.example.com/p/${productId}`, offers: [{ price: '39.00' }] });

    const url = new URL(location);
    expect(url.origin).toBe(inject('stack').s3Endpoint);
    expect(url.pathname).toMatch(new RegExp(`/feeds/${tenant.tenantId}/${tenant.orgId}/[0-9a-f]{64}\\.jsonld$`));
    expect(url.searchParams.has('X-Amz-Signature')).toBe(true);
    const tampered = new URL(url);
    tampered.searchParams.set('X-Amz-Signature', '0'.repeat(64));
    expect((await fetch(tampered)).status).toBe(403);
    // The key alone, unsigned, is not readable.
    expect((await fetch(`${url.origin}${url.pathname}`)).status).toBe(403);

    const sibling = await redirectOf(tenant, '/api/v1/ucp/product-feed.jsonl');
    expect(sibling.status).toBe(302);
    const lines = (await (await fetch(sibling.location as string)).text())
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const line of lines) expect(acpProductProblems(line), JSON.stringify(line)).toEqual([]);
    expect(lines).toEqual([
      expect.objectContaining({
        id: productId,
        variants: [
          expect.objectContaining({
            price: { amount: 3900, currency: 'EUR' },
            seller: { name: 'Acme' },
            availability: { available: false, status: 'out_of_stock' },
          }),
        ],
      }),
    ]);

    // Replaced files are deleted once FEED_KEEP_REPLACED_SECONDS (here 2 s) have passed, at the next build; the served
    // ones and the recently replaced ones stay.
    const rename = async (title: string) => {
      expect((await tenant.request('PUT', `/api/v1/pim/products/${productId}`, { title })).status).toBe(200);
      const until = Date.now() + 20_000;
      while (Date.now() < until) {
        const redirect = await redirectOf(tenant, '/api/v1/ucp/catalog.json');
        const shown = (await (await fetch(redirect.location as string)).json()) as { itemListElement: { item: { name: string } }[] };
        if (shown.itemListElement.some((e) => e.item.name === title)) return redirect.location as string;
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      throw new Error(`the feed never showed ${title}`);
    };
    const second = await rename('Kettle 2');
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const third = await rename('Kettle 3');
    const until = Date.now() + 15_000;
    while ((await fetch(location)).status !== 404 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await fetch(location)).status).toBe(404);
    expect((await fetch(second)).status).toBe(200);
    expect((await fetch(third)).status).toBe(200);
  });
});
