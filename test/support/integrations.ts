import { afterAll, beforeAll, expect } from 'vitest';
import { DEFAULT_WORKSPACE_SECRET, startUnifiedStandIn, type UnifiedStandIn } from '../../stack/unified/stand-in.ts';
import type { Tenant } from './client.ts';
import { unifiedContract } from './unified-contract.ts';

export { startUnifiedStandIn, type UnifiedStandIn };

/**
 * The provider's stand-in for the file (or the `describe`) that calls it: started before its tests, closed after them.
 * Call it before `useServiceAndTenant`, whose service is pointed at `standIn.url`. Everything it took, answered and
 * delivered is checked against the provider's SDK (test/support/unified-contract.ts): a violation fails the file.
 */
export function useStandIn(): UnifiedStandIn {
  let started: UnifiedStandIn | undefined;
  const contract = unifiedContract();
  beforeAll(async () => {
    started = await startUnifiedStandIn({ contract: contract.check, workspaceSecret: DEFAULT_WORKSPACE_SECRET });
  });
  afterAll(async () => {
    await started?.close();
    console.log(`[unified contract] ${contract.checked()} exchanges checked against @unified-api/typescript-sdk`);
    expect(contract.violations(), 'every exchange with the stand-in keeps the SDK contract').toEqual([]);
  });
  return new Proxy({} as UnifiedStandIn, {
    get: (_target, key) => {
      if (!started) throw new Error('the stand-in starts in beforeAll: use it inside a hook or a test');
      const value: unknown = Reflect.get(started, key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(started) : value;
    },
  });
}

/** Polls `read` until `done` holds for what it returns (or the deadline passes, then the last value is asserted on). */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    value = await read();
  }
  return value;
}

/** Connects a fresh stand-in connection to the tenant through the callback; the connection's internal id. */
export async function connect(
  tenant: Tenant,
  standIn: UnifiedStandIn,
  integrationType = 'shopify',
): Promise<{ id: string; unified: string }> {
  const unified = standIn.createConnection(integrationType);
  const saved = await tenant.request('POST', '/api/v1/integrations/callback', { connection_id: unified });
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  const list = await tenant.request('GET', '/api/v1/integrations/connections');
  const connection = list.body.connections.find((c: { unified_connection_id: string }) => c.unified_connection_id === unified);
  expect(connection).toBeDefined();
  return { id: connection.id as string, unified };
}

export const syncOf = (tenant: Tenant, connectionId: string) =>
  tenant.request('GET', `/api/v1/integrations/connections/${connectionId}/sync`).then((r) => {
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  });

/** Waits until the connection has nothing pending or retrying (and its initial sync is complete). */
export const settled = (tenant: Tenant, connectionId: string, timeoutMs?: number) =>
  eventually(
    () => syncOf(tenant, connectionId),
    (s) => s.initial_sync.complete && s.items.pending === 0 && s.items.retrying === 0,
    timeoutMs,
  );

export async function createProduct(tenant: Tenant, title: string, extra: Record<string, unknown> = {}): Promise<string> {
  const created = await tenant.request('POST', '/api/v1/pim/products', { title, description: `${title} described`, ...extra });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id as string;
}

/** The stand-in's items of a connection that carry our reference to `productId`. */
export const remoteItemsOf = (standIn: UnifiedStandIn, unified: string, productId: string) =>
  standIn.items(unified).filter((item) => item.metadata?.some((m) => m.value === `cl:${productId}`));

/**
 * `connect`, then waits until its webhook subscriptions are made and its initial sync has settled: a fault injected
 * afterwards meets the item pushes a test makes, not these calls.
 */
export async function connectQuietly(
  tenant: Tenant,
  standIn: UnifiedStandIn,
  integrationType?: string,
): Promise<{ id: string; unified: string }> {
  const connection = await connect(tenant, standIn, integrationType);
  const hooks = await eventually(
    async () => standIn.subscriptions(connection.unified),
    (s) => s.length === 2,
  );
  expect(hooks).toHaveLength(2);
  expect((await settled(tenant, connection.id)).items).toMatchObject({ pending: 0, retrying: 0 });
  return connection;
}
