import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { newTenant, type Tenant } from './client.ts';
import { orderRequest, stocked } from './orders.ts';
import { eventually, isAcknowledged, repeated, sendSteadily, timedRequest, type Answer } from './private-outage.ts';

/** Past the service's COMMAND_TIMEOUT_MS (15 s): a write still unanswered then has hung. */
const CLIENT_DEADLINE_MS = 17_000;

export type Shop = { label: string; tenant: Tenant; stock: { variantId: string; locationId: string } };
export type Write = Answer & { shop: Shop; kind: 'product' | 'order'; title?: string; idempotencyKey?: string; quantity?: number };
type ListedOrder = {
  id: string;
  idempotency_key: string;
  status: string;
  line_items: Array<{ variant_id: string | null; location_id: string | null; quantity: number }>;
};

/**
 * Two tenants writing products and orders (each stream one request every `everyMs`, not waiting for the last) through a
 * fault, and what the service holds afterwards: every acknowledged write once, nothing doubled, stock reserved exactly
 * for the confirmed orders. Each check returns the problems it found, so that a test names them all.
 */
export class WriteStreams {
  readonly shops: Shop[] = [];
  readonly writes: Write[] = [];

  private readonly baseUrl: string;
  private readonly initialStock: number;
  /** The service's database: the audit trail read whole there, where its route shows the 100 most recent events. */
  private readonly databaseUrl: string | undefined;

  private constructor(baseUrl: string, initialStock: number, databaseUrl: string | undefined) {
    this.baseUrl = baseUrl;
    this.initialStock = initialStock;
    this.databaseUrl = databaseUrl;
  }

  static async open(baseUrl: string, { initialStock = 1_000, databaseUrl }: { initialStock?: number; databaseUrl?: string } = {}) {
    const streams = new WriteStreams(baseUrl, initialStock, databaseUrl);
    for (const label of ['A', 'B']) {
      const tenant = await newTenant(baseUrl);
      streams.shops.push({ label, tenant, stock: await stocked(tenant, initialStock) });
    }
    return streams;
  }

  /** The four streams (two tenants × product, order), spread over each period, until `enough()`. */
  run({ everyMs, max, enough }: { everyMs: number; max: number; enough: () => boolean }): Promise<unknown> {
    return Promise.all(
      this.shops.flatMap((shop, s) =>
        [this.writeProduct, this.writeOrder].map(async (write, k) => {
          await sleep((2 * s + k) * (everyMs / 4));
          return sendSteadily((i) => write(shop, i), { everyMs, max, enough });
        }),
      ),
    );
  }

  read = (shop: Shop, path: string): Promise<Answer> =>
    timedRequest(this.baseUrl, {
      what: `tenant ${shop.label}: GET ${path}`,
      method: 'GET',
      path,
      headers: shop.tenant.headers,
      deadlineMs: 10_000,
    });

  private writeProduct = async (shop: Shop, i: number): Promise<Write> => {
    const title = `${shop.label} product ${i}`;
    const answer = await timedRequest(this.baseUrl, {
      what: `tenant ${shop.label}: POST product "${title}"`,
      method: 'POST',
      path: '/api/v1/pim/products',
      body: { title },
      headers: shop.tenant.headers,
      deadlineMs: CLIENT_DEADLINE_MS,
    });
    const write: Write = { ...answer, shop, kind: 'product', title };
    this.writes.push(write);
    return write;
  };

  private writeOrder = async (shop: Shop, i: number): Promise<Write> => {
    const quantity = 1 + (i % 3);
    const line = { name: 'Cup', quantity, unit_price: '2.50', variant_id: shop.stock.variantId, location_id: shop.stock.locationId };
    const request = orderRequest({ line_items: [line] });
    const answer = await timedRequest(this.baseUrl, {
      what: `tenant ${shop.label}: POST order ${request.idempotency_key} (${quantity} units)`,
      method: 'POST',
      path: '/api/v1/oms/orders',
      body: request,
      headers: shop.tenant.headers,
      deadlineMs: CLIENT_DEADLINE_MS,
    });
    const write: Write = { ...answer, shop, kind: 'order', idempotencyKey: request.idempotency_key, quantity };
    this.writes.push(write);
    return write;
  };

  /** Acknowledged products missing or unreadable, listed or audited more than once, or not audited. */
  async productProblems(shop: Shop): Promise<string[]> {
    const acknowledged = this.writes.filter((w) => w.shop === shop && w.kind === 'product' && isAcknowledged(w));
    const list = await this.read(shop, '/api/v1/pim/products?limit=1000');
    if (list.status !== 200) return [`GET products: ${list.status}`];
    const listed: Array<{ id: string; title: string }> = list.body;
    const problems = [
      ...repeated(listed.map((p) => p.id)).map((r) => `listed ${r.times}×: ${r.value}`),
      ...repeated(listed.map((p) => p.title)).map((r) => `one write, ${r.times} products: ${r.value}`),
    ];
    const listedIds = new Set(listed.map((p) => p.id));
    problems.push(
      ...acknowledged.filter((w) => !listedIds.has(w.body.id)).map((w) => `acknowledged, not listed: ${w.what} -> ${w.body.id}`),
    );
    const auditRows = await this.auditTrail(shop);
    if (typeof auditRows === 'string') return [...problems, auditRows];
    const created = auditRows.filter((e) => e.action === 'product.created').map((e) => e.entity_id);
    problems.push(...repeated(created).map((r) => `creation audited ${r.times}×: ${r.value}`));
    problems.push(...acknowledged.filter((w) => !created.includes(w.body.id)).map((w) => `acknowledged, not audited: ${w.what}`));
    return problems.map((p) => `tenant ${shop.label}: ${p}`);
  }

  /** The tenant's audit events: from the route (its 100 most recent), or every one from the database when it is known. */
  private async auditTrail(shop: Shop): Promise<Array<{ action: string; entity_id: string }> | string> {
    if (this.databaseUrl) {
      const client = new pg.Client({ connectionString: this.databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ action: string; entity_id: string }>(
          'select action, entity_id from rm_audit.audit_events where tenant_id = $1',
          [shop.tenant.tenantId],
        );
        return rows;
      } finally {
        await client.end();
      }
    }
    const audit = await this.read(shop, '/api/v1/pim/audit');
    if (audit.status !== 200) return `GET audit: ${audit.status}`;
    // The audit route shows the 100 most recent events: a phase writes fewer products than that per tenant.
    const rows: Array<{ action: string; entity_id: string }> = audit.body;
    return rows.length >= 100 ? `${rows.length} audit events: more than the route shows, cannot check them all` : rows;
  }

  /** Acknowledged orders missing, doubled (by id or idempotency key) or not confirmed; stock not reserved exactly for them. */
  async orderProblems(shop: Shop): Promise<string[]> {
    const acknowledged = this.writes.filter((w) => w.shop === shop && w.kind === 'order' && isAcknowledged(w));
    const reading = async () => {
      const orders = await this.allOrders(shop);
      const confirmedUnits = orders
        .filter((o) => o.status === 'confirmed')
        .flatMap((o) => o.line_items)
        .filter((line) => line.variant_id === shop.stock.variantId && line.location_id === shop.stock.locationId)
        .reduce((sum, line) => sum + line.quantity, 0);
      const level = await this.read(
        shop,
        `/api/v1/oms/inventory/levels?variant_id=${shop.stock.variantId}&location_id=${shop.stock.locationId}`,
      );
      const { available, reserved, on_hand } = level.body?.[0] ?? {};
      return { orders, confirmedUnits, level: { available, reserved, on_hand } };
    };
    // An order in flight at the fault may still be on its way to confirmed.
    const { orders, confirmedUnits, level } = await eventually(reading, (r) => r.level.reserved === r.confirmedUnits, 15_000);
    const problems = [
      ...repeated(orders.map((o) => o.id)).map((r) => `order listed ${r.times}×: ${r.value}`),
      ...repeated(orders.map((o) => o.idempotency_key)).map((r) => `one idempotency key, ${r.times} orders: ${r.value}`),
      ...orders.filter((o) => o.status !== 'confirmed').map((o) => `not confirmed: ${o.id} (${o.idempotency_key}): ${o.status}`),
    ];
    const listedIds = new Set(orders.map((o) => o.id));
    problems.push(
      ...acknowledged.filter((w) => !listedIds.has(w.body.id)).map((w) => `acknowledged, not listed: ${w.what} -> ${w.body.id}`),
    );
    const expected = { available: this.initialStock - confirmedUnits, reserved: confirmedUnits, on_hand: this.initialStock };
    if (JSON.stringify(level) !== JSON.stringify(expected))
      problems.push(`stock ${JSON.stringify(level)}, expected ${JSON.stringify(expected)}`);
    return problems.map((p) => `tenant ${shop.label}: ${p}`);
  }

  private async allOrders(shop: Shop): Promise<ListedOrder[]> {
    const orders: ListedOrder[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await this.read(shop, `/api/v1/oms/orders?limit=100&offset=${offset}`);
      if (page.status !== 200) throw new Error(`GET orders: ${page.status} ${JSON.stringify(page.body)}`);
      orders.push(...page.body.data);
      if (page.body.data.length < 100) return orders;
    }
  }
}
