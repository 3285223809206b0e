import { randomUUID } from 'node:crypto';
import type { Tenant } from './client.ts';

/** A valid order request; override any field. */
export const orderRequest = (overrides: Record<string, unknown> = {}) => ({
  idempotency_key: randomUUID(),
  payment_provider: 'stripe',
  payment_transaction_id: `pi_${randomUUID().replaceAll('-', '')}`,
  line_items: [{ name: 'Gift card', quantity: 1, unit_price: 10 }],
  ...overrides,
});

/** A stock location holding `available` units of a fresh variant. */
export async function stocked(tenant: Tenant, available: number): Promise<{ variantId: string; locationId: string }> {
  const created = await tenant.request('POST', '/api/v1/oms/inventory/locations', { name: `Warehouse ${randomUUID().slice(0, 6)}` });
  if (created.status !== 201) throw new Error(`location not created: ${JSON.stringify(created.body)}`);
  const variantId = randomUUID();
  const locationId: string = created.body.id;
  const set = await tenant.request('PUT', `/api/v1/oms/inventory/levels/${variantId}/${locationId}`, { available });
  if (set.status !== 200) throw new Error(`level not set: ${JSON.stringify(set.body)}`);
  return { variantId, locationId };
}

export async function stockLevel(tenant: Tenant, { variantId, locationId }: { variantId: string; locationId: string }) {
  const response = await tenant.request('GET', `/api/v1/oms/inventory/levels?variant_id=${variantId}&location_id=${locationId}`);
  return response.body[0] as { available: number; reserved: number; on_hand: number };
}

/** Polls the order until `until` holds, within a bounded deadline (status changes are applied asynchronously). */
export async function eventually<T>(read: () => Promise<T>, until: (value: T) => boolean, deadlineMs = 30_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (until(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
