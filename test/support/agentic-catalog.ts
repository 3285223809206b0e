import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Tenant } from './client.ts';
import { acpProductProblems } from './acp-feed-schema.ts';
import { SELLER_PAGES } from './feed-settings.ts';
import { ucpProfileProblems } from './ucp-profile-schema.ts';

/**
 * What the agentic checkout suites (ACP's, UCP's) set up and read as the merchant and as an agent: a stocked product,
 * the feed settings, the feed's lines an agent finds items in, the tenant's UCP profile, the orders a session placed.
 */
export const ok = <T>(response: { status: number; body: T }, status: number): T => {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
};

/** A product with one variant at `price` EUR and `available` units in a fresh location. */
export async function stockedProduct(tenant: Tenant, title: string, price: string, available: number) {
  const product = ok(await tenant.request('POST', '/api/v1/pim/products', { title, description: `${title}, well made.` }), 201) as {
    id: string;
  };
  const sku = `SKU-${randomUUID().slice(0, 8)}`;
  const variant = ok(await tenant.request('POST', `/api/v1/pim/products/${product.id}/variants`, { sku, price, currency: 'EUR' }), 201) as {
    id: string;
  };
  const location = ok(await tenant.request('POST', '/api/v1/oms/inventory/locations', { name: `Shelf ${sku}` }), 201) as { id: string };
  ok(await tenant.request('PUT', `/api/v1/oms/inventory/levels/${variant.id}/${location.id}`, { available }), 200);
  return { productId: product.id, variantId: variant.id, locationId: location.id };
}

/** Feed settings with the seller's pages, France as the market, and a flat 4.90 EUR shipping rate. */
export async function configureFeed(tenant: Tenant) {
  const body = {
    seller_name: 'Acme Outdoor',
    product_url_template: 'https://shop.example.com/products/{sku}',
    seller_url: SELLER_PAGES.sellerUrl,
    privacy_policy_url: SELLER_PAGES.privacyPolicyUrl,
    terms_of_service_url: SELLER_PAGES.termsOfServiceUrl,
    return_policy_url: SELLER_PAGES.returnPolicyUrl,
    target_countries: ['FR'],
    shipping: { price: '4.90', currency: 'EUR' },
  };
  ok(await tenant.request('PUT', '/api/v1/ucp/feed-settings', body), 200);
}

/** The feed's ACP lines once they list every product named, each line valid per ACP's feed schema. */
export async function feedLines(baseUrl: string, tenant: Tenant, productIds: string[]): Promise<Record<string, any>[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const redirect = await fetch(`${baseUrl}/api/v1/ucp/product-feed.jsonl`, { headers: tenant.headers, redirect: 'manual' });
    const location = redirect.headers.get('location');
    if (redirect.status === 302 && location) {
      const lines = (await (await fetch(location)).text())
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, any>);
      if (productIds.every((id) => lines.some((line) => line.id === id))) {
        for (const line of lines) expect(acpProductProblems(line)).toEqual([]);
        return lines;
      }
    }
    if (Date.now() > deadline) throw new Error('the feed did not list the products');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A tenant's UCP business profile as an agent reads it (public, no credentials), valid per UCP's published schemas. */
/**
 * The journeys' shop: the feed configured, an espresso cup (12.50, 10 in stock) and a moka pot (30.00, 3), and the item
 * ids an agent reads from the feed's lines for them, which are the ids the feed's variants carry.
 */
export async function twoFeedItems(baseUrl: string, tenant: Tenant) {
  await configureFeed(tenant);
  const cup = await stockedProduct(tenant, 'Espresso cup', '12.50', 10);
  const pot = await stockedProduct(tenant, 'Moka pot', '30.00', 3);
  const lines = await feedLines(baseUrl, tenant, [cup.productId, pot.productId]);
  const itemOf = (productId: string) => lines.find((line) => line.id === productId)?.variants[0].id as string;
  const [cupItem, potItem] = [itemOf(cup.productId), itemOf(pot.productId)];
  expect([cupItem, potItem]).toEqual([cup.variantId, pot.variantId]);
  return { cup, pot, cupItem, potItem };
}

export async function ucpProfile(checkout: { ucp_profile_url: string }): Promise<Record<string, any>> {
  const response = await fetch(checkout.ucp_profile_url);
  expect(response.status).toBe(200);
  const profile = (await response.json()) as Record<string, any>;
  expect(ucpProfileProblems(profile)).toEqual([]);
  return profile;
}

/** The orders a checkout session placed (tagged with it), of the tenant's latest 100. */
export const ordersOfSession = async (tenant: Tenant, sessionId: string) => {
  const page = ok(await tenant.request('GET', '/api/v1/oms/orders?limit=100'), 200) as {
    data: { id: string; tags: string[]; status: string }[];
  };
  return page.data.filter((order) => order.tags.includes(`checkout_session:${sessionId}`));
};
