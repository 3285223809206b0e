import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CommerceItem, ProviderConnection, RemoteItem, WebhookSubscription } from '../../adapters/provider/provider.ts';
import { deliveryBody, type NativeDeliveryRequest } from './native-deliveries.ts';
import {
  ITEM_FIELDS,
  VARIANT_FIELDS,
  WEBHOOK_EVENTS,
  WEBHOOK_OBJECT_TYPES,
  pick,
  type ContractCheck,
  type Operation,
} from './published-shapes.ts';

/**
 * A stand-in for the connection provider (a Unified.to-style unified API) that we cannot run: a real HTTP server on
 * its own port speaking the provider's paths, bodies, status codes and headers, holding everything in memory, with a
 * control surface through which tests inject the provider's failures.
 */

export const DEFAULT_STAND_IN_TOKEN = 'dev-unified-token';
/** The workspace secret the stand-in signs its native deliveries with (the service's UNIFIED_WORKSPACE_SECRET). */
export const DEFAULT_WORKSPACE_SECRET = 'dev-workspace-secret';

/** Every answer of the stand-in carries this header, so another process can tell it from whatever else holds a port. */
export const STAND_IN_HEADER = 'x-unified-stand-in';
/** Answers 200 to the stand-in's bearer token (401 to any other): whether a client with that token is served. */
export const STAND_IN_PROBE_PATH = '/stand-in';

export type StandInOptions = {
  port?: number;
  host?: string;
  token?: string;
  workspaceSecret?: string;
  /** Called with every request the stand-in takes and every answer it gives (tests check them against the SDK). */
  contract?: ContractCheck;
};

export type StandInConnection = ProviderConnection & {
  workspace_id: string;
  categories: string[];
  permissions: string[];
  created_at: string;
  updated_at: string;
};

export type StoredItem = RemoteItem & { created_at: string; updated_at: string };
export type StoredVariant = Record<string, unknown> & { id: string; items: { id: string }[]; created_at: string; updated_at: string };
export type StoredWebhook = WebhookSubscription & Record<string, unknown>;
export type DeliveryOutcome = { hookUrl: string; status: number; body: string };

/** One request the stand-in saw. `status` 0: it answered nothing (the socket was destroyed). */
export type LoggedRequest = { method: string; path: string; status: number; at: number; connectionId?: string };

export type RevokedStatus = 401 | 403 | 404;

export interface UnifiedStandIn {
  /** Base URL, no trailing slash. */
  readonly url: string;
  readonly token: string;
  readonly workspaceSecret: string;
  close(): Promise<void>;

  createConnection(integrationType?: string, workspaceId?: string): string;
  connection(id: string): StandInConnection | undefined;
  /** The consent page sends the browser to failure_redirect (`error=access_denied`) while on. */
  failAuth(on?: boolean): void;
  /** The scopes each authorization asked for, in order. */
  authorizations(): { integrationType: string; scopes: string[] }[];

  items(connectionId: string): StoredItem[];
  variants(connectionId: string, itemId?: string): StoredVariant[];
  subscriptions(connectionId?: string): StoredWebhook[];
  /**
   * Posts a native delivery (`{ data, webhook, nonce, sig, sig256, type }`) of the connection's objects to the hook URL of
   * each of its subscriptions to `objectType` and `event`, signed with the workspace secret; `sig256` may be forced.
   */
  deliver(connectionId: string, delivery: NativeDeliveryRequest): Promise<DeliveryOutcome[]>;
  requests(connectionId?: string): LoggedRequest[];
  resetLog(): void;

  /** The next `count` item/webhook calls of the connection answer `status` (queued after faults already waiting). */
  failNext(connectionId: string, count: number, status?: number): void;
  /** The next `count` calls answer 429, with `Retry-After` only when `retryAfterSeconds` is given. */
  rateLimitNext(connectionId: string, count: number, retryAfterSeconds?: number): void;
  /** Every answer of the connection waits `delayMs` (0: no delay); the call still takes effect, only its answer is late. */
  slow(connectionId: string, delayMs: number): void;
  /** Every call of the connection answers `status` until `restore`. */
  revoke(connectionId: string, status?: RevokedStatus): void;
  restore(connectionId: string): void;
  /** The next `count` subscriptions of the connection are refused with `status` (a platform without such webhooks). */
  refuseSubscriptions(connectionId: string, count: number, status?: number): void;
  /** The next item create is stored, then its socket is destroyed without an answer. */
  loseNextCreateResponse(connectionId: string): void;
  clearFaults(): void;
}

type QueuedFault = { status: number; retryAfterSeconds?: number };
type Faults = {
  queue: QueuedFault[];
  delayMs: number;
  revoked?: RevokedStatus;
  loseCreates: number;
  refusedSubscriptions: QueuedFault[];
};

type Answer = { status: number; body?: unknown; text?: string; headers?: Record<string, string>; lose?: boolean };

class HttpError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const MAX_BODY_BYTES = 5 * 1024 * 1024;
const DEFAULT_LIMIT = 100;
const CONSENT_PATH = '/stand-in/consent';

const randomId = (prefix: string): string => `${prefix}_${randomBytes(8).toString('hex')}`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The route's connection, operation and answer, as the logging and the contract check need them. */
type Context = { connectionId?: string; operation?: Operation; query?: URLSearchParams; body?: unknown };

export async function startUnifiedStandIn(options: StandInOptions = {}): Promise<UnifiedStandIn> {
  const token = options.token ?? DEFAULT_STAND_IN_TOKEN;
  const workspaceSecret = options.workspaceSecret ?? DEFAULT_WORKSPACE_SECRET;
  const host = options.host ?? '127.0.0.1';
  const check: ContractCheck = options.contract ?? (() => undefined);

  const connections = new Map<string, StandInConnection>();
  const items = new Map<string, Map<string, StoredItem>>();
  const variants = new Map<string, Map<string, StoredVariant>>();
  const webhooks = new Map<string, StoredWebhook>();
  const faults = new Map<string, Faults>();
  const authorizations: { integrationType: string; scopes: string[] }[] = [];
  let log: LoggedRequest[] = [];
  let authFails = false;
  let itemSequence = 0;
  let baseUrl = '';

  const faultsOf = (connectionId: string): Faults => {
    let found = faults.get(connectionId);
    if (!found) {
      found = { queue: [], delayMs: 0, loseCreates: 0, refusedSubscriptions: [] };
      faults.set(connectionId, found);
    }
    return found;
  };

  const createConnection = (integrationType = 'shopify', workspaceId = 'dev-workspace'): string => {
    const id = randomId('conn');
    const now = new Date().toISOString();
    connections.set(id, {
      id,
      integration_type: integrationType,
      categories: ['commerce', 'accounting'],
      permissions: ['commerce_item_read', 'commerce_item_write', 'accounting_order_read'],
      workspace_id: workspaceId,
      created_at: now,
      updated_at: now,
    });
    items.set(id, new Map());
    variants.set(id, new Map());
    return id;
  };

  const knownConnection = (connectionId: string): Map<string, StoredItem> => {
    const stored = items.get(connectionId);
    if (!stored) throw new HttpError(404, `Connection ${connectionId} not found`);
    return stored;
  };

  /** The connection's injected failure for this call, if any; consumes a queued one. */
  const injectedFault = (connectionId: string): Answer | undefined => {
    const f = faults.get(connectionId);
    if (!f) return undefined;
    if (f.revoked) return errorAnswer(f.revoked, revokedMessage(f.revoked, connectionId));
    const next = f.queue.shift();
    if (!next) return undefined;
    if (next.status === 429) {
      const headers = next.retryAfterSeconds === undefined ? undefined : { 'retry-after': String(next.retryAfterSeconds) };
      return { ...errorAnswer(429, 'Too many requests to the integration: rate limited'), headers };
    }
    return errorAnswer(next.status, `The integration failed (${next.status})`);
  };

  const objectBody = (body: unknown): Record<string, unknown> => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'The body must be a JSON object');
    return body as Record<string, unknown>;
  };

  /** The item as written, less what the provider's model does not have; 400 when it is not one. */
  const itemBody = (body: unknown): Partial<CommerceItem> & Record<string, unknown> => {
    const item = pick(objectBody(body), ITEM_FIELDS);
    if (item.name !== undefined && (typeof item.name !== 'string' || item.name === '')) throw new HttpError(400, 'name must not be empty');
    return item;
  };

  /** The variant as written, less unknown fields; its `items` must name an item of the connection. */
  const variantBody = (body: unknown, stored: Map<string, StoredItem>, required: boolean): Record<string, unknown> => {
    const variant = pick(objectBody(body), VARIANT_FIELDS);
    const parent = (variant.items as { id?: unknown }[] | undefined)?.[0]?.id;
    if (required || variant.items !== undefined) {
      if (typeof parent !== 'string') throw new HttpError(400, 'items must name the item the variant belongs to: [{ "id": … }]');
      if (!stored.has(parent)) throw new HttpError(404, `Item ${parent} not found`);
      variant.items = [{ id: parent }];
    }
    return variant;
  };

  async function route(req: IncomingMessage, url: URL, ctx: Context): Promise<Answer> {
    const method = req.method ?? 'GET';
    const parts = url.pathname.split('/').filter(Boolean).map(decodeSegment);
    ctx.query = url.searchParams;

    // The browser-facing start of the authorization flow: no bearer; the consent URL as text, or a redirect to it.
    if (method === 'GET' && parts.length === 5 && parts[0] === 'unified' && parts[1] === 'integration' && parts[2] === 'auth') {
      ctx.operation = 'getUnifiedIntegrationAuth';
      return authorize(parts[3]!, parts[4]!, url.searchParams);
    }
    // The platform's consent page, where the browser lands: it returns the browser to our redirect.
    if (method === 'GET' && url.pathname === CONSENT_PATH) return consent(url.searchParams);

    if (req.headers.authorization !== `Bearer ${token}`) {
      const refused = errorAnswer(
        401,
        req.headers.authorization ? 'The API token is not valid' : 'An Authorization: Bearer token is required',
      );
      return { ...refused, headers: { 'www-authenticate': 'Bearer' } };
    }

    // Not the provider's API: lets a developer make the stand-in send a native delivery (see README "Integrations").
    if (method === 'POST' && parts[0] === 'stand-in' && parts[1] === 'connections' && parts[3] === 'deliveries' && parts.length === 4) {
      const outcomes = await deliver(parts[2]!, (await readJson(req)) as NativeDeliveryRequest);
      return { status: 200, body: outcomes };
    }

    if (method === 'GET' && url.pathname === STAND_IN_PROBE_PATH) return { status: 200, body: { service: 'unified-stand-in' } };

    if (parts[0] === 'unified' && parts[1] === 'connection' && parts.length === 3 && method === 'GET') {
      ctx.operation = 'getUnifiedConnection';
      const connection = connections.get(parts[2]!);
      if (!connection) throw new HttpError(404, `Connection ${parts[2]} not found`);
      ctx.connectionId = connection.id;
      return { status: 200, body: connection };
    }

    if (parts[0] === 'unified' && parts[1] === 'webhook') return webhookRoute(req, method, url, parts, ctx);

    const kind = parts[0] === 'commerce' ? parts[2] : undefined;
    if ((kind === 'item' || kind === 'itemvariant') && (parts.length === 3 || parts.length === 4)) {
      const connectionId = parts[1]!;
      ctx.connectionId = connectionId;
      ctx.operation = operationOf(kind, method, parts.length === 4);
      const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? await readJson(req) : undefined;
      ctx.body = body;
      const stored = knownConnection(connectionId);
      const fault = injectedFault(connectionId);
      if (fault) return fault;
      if (kind === 'itemvariant') {
        const storedVariants = variants.get(connectionId)!;
        return parts.length === 3
          ? variantsRoute(method, url, stored, storedVariants, body)
          : variantRoute(method, parts[3]!, stored, storedVariants, body);
      }
      return parts.length === 3
        ? itemsRoute(method, url, connectionId, stored, body)
        : itemRoute(method, connectionId, parts[3]!, stored, body);
    }

    throw new HttpError(404, `No route for ${method} ${url.pathname}`);
  }

  function authorize(workspaceId: string, integrationType: string, query: URLSearchParams): Answer {
    authorizations.push({ integrationType, scopes: query.getAll('scopes') });
    const consentUrl = new URL(`${baseUrl}${CONSENT_PATH}`);
    consentUrl.searchParams.set('workspace_id', workspaceId);
    consentUrl.searchParams.set('integration_type', integrationType);
    for (const key of ['success_redirect', 'failure_redirect', 'state']) {
      const value = query.get(key);
      if (value !== null) consentUrl.searchParams.set(key, value);
    }
    const location = consentUrl.toString();
    // As Unified answers: the URL as text unless the caller asks for the redirect itself.
    if (query.get('redirect') === 'true') return { status: 302, headers: { location } };
    return { status: 200, text: location };
  }

  function consent(query: URLSearchParams): Answer {
    const state = query.get('state');
    const target = (base: string, params: Record<string, string>): string => {
      let location: URL;
      try {
        location = new URL(base);
      } catch {
        throw new HttpError(400, `Not an absolute URL: ${base}`);
      }
      for (const [key, value] of Object.entries(params)) location.searchParams.set(key, value);
      if (state !== null) location.searchParams.set('state', state);
      return location.toString();
    };
    const failure = query.get('failure_redirect') ?? query.get('success_redirect');
    if (authFails) {
      if (!failure) return { status: 200, text: 'The authorization was refused.' };
      return { status: 302, headers: { location: target(failure, { error: 'access_denied' }) } };
    }
    const id = createConnection(query.get('integration_type') ?? 'shopify', query.get('workspace_id') ?? 'dev-workspace');
    const success = query.get('success_redirect');
    if (!success) return { status: 200, text: `Connected: ${id}` };
    return { status: 302, headers: { location: target(success, { id }) } };
  }

  async function webhookRoute(req: IncomingMessage, method: string, url: URL, parts: string[], ctx: Context): Promise<Answer> {
    if (parts.length === 2 && method === 'POST') {
      ctx.operation = 'createUnifiedWebhook';
      const body = objectBody(await readJson(req));
      ctx.body = body;
      const connectionId = typeof body.connection_id === 'string' ? body.connection_id : '';
      if (connectionId === '') throw new HttpError(400, 'connection_id is required');
      ctx.connectionId = connectionId;
      knownConnection(connectionId);
      const fault = injectedFault(connectionId);
      if (fault) return fault;
      if (typeof body.object_type !== 'string' || !WEBHOOK_OBJECT_TYPES.includes(body.object_type)) {
        throw new HttpError(400, `object_type ${JSON.stringify(body.object_type)} is not a webhook object type`);
      }
      if (typeof body.event !== 'string' || !(WEBHOOK_EVENTS as readonly string[]).includes(body.event)) {
        throw new HttpError(400, `event ${JSON.stringify(body.event)} must be one of ${WEBHOOK_EVENTS.join(', ')}`);
      }
      const refusal = faults.get(connectionId)?.refusedSubscriptions.shift();
      if (refusal) throw new HttpError(refusal.status, `Webhooks for ${body.object_type} are not supported by this integration`);
      const connection = connections.get(connectionId)!;
      const now = new Date().toISOString();
      const subscription: StoredWebhook = {
        id: randomId('wh'),
        connection_id: connectionId,
        hook_url: typeof body.hook_url === 'string' ? body.hook_url : '',
        object_type: body.object_type,
        event: body.event,
        workspace_id: connection.workspace_id,
        integration_type: connection.integration_type,
        environment: 'Production',
        webhook_type: 'virtual',
        interval: 60,
        is_healthy: true,
        is_paused: false,
        created_at: now,
        updated_at: now,
      };
      webhooks.set(subscription.id, subscription);
      return { status: 200, body: subscription };
    }
    if (parts.length === 2 && method === 'GET') {
      ctx.operation = 'listUnifiedWebhooks';
      const connectionId = url.searchParams.get('connection_id') ?? undefined;
      if (connectionId !== undefined) {
        ctx.connectionId = connectionId;
        knownConnection(connectionId);
        const fault = injectedFault(connectionId);
        if (fault) return fault;
      }
      return { status: 200, body: [...webhooks.values()].filter((w) => connectionId === undefined || w.connection_id === connectionId) };
    }
    if (parts.length === 3 && method === 'DELETE') {
      ctx.operation = 'removeUnifiedWebhook';
      const subscription = webhooks.get(parts[2]!);
      if (!subscription) throw new HttpError(404, `Webhook ${parts[2]} not found`);
      ctx.connectionId = subscription.connection_id;
      const fault = injectedFault(subscription.connection_id);
      if (fault) return fault;
      webhooks.delete(subscription.id);
      return { status: 200 };
    }
    throw new HttpError(404, `No route for ${method} ${url.pathname}`);
  }

  function itemsRoute(method: string, url: URL, connectionId: string, stored: Map<string, StoredItem>, body: unknown): Answer {
    if (method === 'POST') {
      const written = itemBody(body);
      if (typeof written.name !== 'string') throw new HttpError(400, 'name is required');
      const now = new Date().toISOString();
      const item = { ...written, id: `item_${++itemSequence}`, created_at: now, updated_at: now } as StoredItem;
      stored.set(item.id, item);
      const f = faults.get(connectionId);
      if (f && f.loseCreates > 0) {
        f.loseCreates--;
        return { status: 200, lose: true };
      }
      return { status: 200, body: item };
    }
    if (method === 'GET') return { status: 200, body: page(url, [...stored.values()]) };
    throw new HttpError(405, `${method} is not allowed on ${url.pathname}`);
  }

  function itemRoute(method: string, connectionId: string, itemId: string, stored: Map<string, StoredItem>, body: unknown): Answer {
    const existing = stored.get(itemId);
    if (!existing) throw new HttpError(404, `Item ${itemId} not found`);
    if (method === 'GET') return { status: 200, body: existing };
    if (method === 'PUT' || method === 'PATCH') {
      const written = itemBody(body);
      // PUT replaces what it names (the provider keeps the rest of the platform's record); PATCH the same, field by field.
      const updated = { ...existing, ...written, id: existing.id, created_at: existing.created_at, updated_at: new Date().toISOString() };
      stored.set(itemId, updated as StoredItem);
      return { status: 200, body: updated };
    }
    if (method === 'DELETE') {
      stored.delete(itemId);
      // The platform removes an item's variants with it.
      const storedVariants = variants.get(connectionId)!;
      for (const [id, variant] of storedVariants) if (variant.items[0]?.id === itemId) storedVariants.delete(id);
      return { status: 200 };
    }
    throw new HttpError(405, `${method} is not allowed on an item`);
  }

  function variantsRoute(
    method: string,
    url: URL,
    stored: Map<string, StoredItem>,
    storedVariants: Map<string, StoredVariant>,
    body: unknown,
  ): Answer {
    if (method === 'POST') {
      const written = variantBody(body, stored, true);
      const now = new Date().toISOString();
      const variant = { ...written, id: `variant_${++itemSequence}`, created_at: now, updated_at: now } as StoredVariant;
      storedVariants.set(variant.id, variant);
      return { status: 200, body: variant };
    }
    if (method === 'GET') {
      const itemId = url.searchParams.get('item_id');
      const all = [...storedVariants.values()].filter((v) => itemId === null || v.items[0]?.id === itemId);
      return { status: 200, body: page(url, all) };
    }
    throw new HttpError(405, `${method} is not allowed on ${url.pathname}`);
  }

  function variantRoute(
    method: string,
    variantId: string,
    stored: Map<string, StoredItem>,
    storedVariants: Map<string, StoredVariant>,
    body: unknown,
  ): Answer {
    const existing = storedVariants.get(variantId);
    if (!existing) throw new HttpError(404, `Item variant ${variantId} not found`);
    if (method === 'GET') return { status: 200, body: existing };
    if (method === 'PUT' || method === 'PATCH') {
      const written = variantBody(body, stored, false);
      const updated = { ...existing, ...written, id: existing.id, created_at: existing.created_at, updated_at: new Date().toISOString() };
      storedVariants.set(variantId, updated as StoredVariant);
      return { status: 200, body: updated };
    }
    if (method === 'DELETE') {
      storedVariants.delete(variantId);
      return { status: 200 };
    }
    throw new HttpError(405, `${method} is not allowed on an item variant`);
  }

  async function deliver(connectionId: string, request: NativeDeliveryRequest): Promise<DeliveryOutcome[]> {
    if (!connections.has(connectionId)) throw new HttpError(404, `Connection ${connectionId} not found`);
    const hooks = [...webhooks.values()].filter(
      (w) => w.connection_id === connectionId && w.object_type === request.objectType && w.event === request.event && w.hook_url !== '',
    );
    return Promise.all(
      hooks.map(async (hook) => {
        const body = deliveryBody(workspaceSecret, hook, request);
        check({ kind: 'delivery', operation: 'nativeDelivery', body });
        const response = await fetch(hook.hook_url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { hookUrl: hook.hook_url, status: response.status, body: await response.text() };
      }),
    );
  }

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  // The client's pool keeps sockets alive; answer on them for longer than its idle timeout so it never races a close.
  server.keepAliveTimeout = 15_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const ctx: Context = {};
    let answer: Answer;
    try {
      answer = await route(req, url, ctx);
    } catch (error) {
      answer = error instanceof HttpError ? errorAnswer(error.status, error.message) : errorAnswer(500, `Stand-in fault: ${String(error)}`);
    }
    if (ctx.operation) {
      check({ kind: 'request', operation: ctx.operation, query: ctx.query ?? new URLSearchParams(), body: ctx.body });
      if (!answer.lose) check({ kind: 'answer', operation: ctx.operation, status: answer.status, body: answer.body ?? answer.text });
    }
    const delayMs = ctx.connectionId === undefined ? 0 : (faults.get(ctx.connectionId)?.delayMs ?? 0);
    if (delayMs > 0) await sleep(delayMs);
    log.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      status: answer.lose ? 0 : answer.status,
      at: Date.now(),
      connectionId: ctx.connectionId,
    });
    if (answer.lose) {
      req.socket.destroy();
      return;
    }
    if (res.destroyed) return;
    const headers: Record<string, string> = { ...answer.headers, [STAND_IN_HEADER]: '1' };
    const payload = answer.body !== undefined ? JSON.stringify(answer.body) : answer.text;
    if (payload !== undefined)
      headers['content-type'] = answer.body !== undefined ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8';
    headers['content-length'] = String(payload === undefined ? 0 : Buffer.byteLength(payload));
    res.writeHead(answer.status, headers).end(payload);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  baseUrl = url;

  return {
    url,
    token,
    workspaceSecret,
    async close() {
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
    createConnection,
    connection: (id) => structuredClone(connections.get(id)),
    failAuth(on = true) {
      authFails = on;
    },
    authorizations: () => structuredClone(authorizations),
    items: (connectionId) => structuredClone([...(items.get(connectionId)?.values() ?? [])]),
    variants: (connectionId, itemId) =>
      structuredClone([...(variants.get(connectionId)?.values() ?? [])].filter((v) => itemId === undefined || v.items[0]?.id === itemId)),
    subscriptions: (connectionId) =>
      structuredClone([...webhooks.values()].filter((w) => connectionId === undefined || w.connection_id === connectionId)),
    deliver,
    requests: (connectionId) => log.filter((entry) => connectionId === undefined || entry.connectionId === connectionId),
    resetLog() {
      log = [];
    },
    failNext(connectionId, count, status = 500) {
      for (let i = 0; i < count; i++) faultsOf(connectionId).queue.push({ status });
    },
    rateLimitNext(connectionId, count, retryAfterSeconds) {
      for (let i = 0; i < count; i++) faultsOf(connectionId).queue.push({ status: 429, retryAfterSeconds });
    },
    slow(connectionId, delayMs) {
      faultsOf(connectionId).delayMs = Math.max(0, delayMs);
    },
    revoke(connectionId, status = 401) {
      faultsOf(connectionId).revoked = status;
    },
    restore(connectionId) {
      faultsOf(connectionId).revoked = undefined;
    },
    refuseSubscriptions(connectionId, count, status = 400) {
      for (let i = 0; i < count; i++) faultsOf(connectionId).refusedSubscriptions.push({ status });
    },
    loseNextCreateResponse(connectionId) {
      faultsOf(connectionId).loseCreates++;
    },
    clearFaults() {
      faults.clear();
    },
  };
}

const OPERATIONS: Record<'item' | 'itemvariant', Record<string, [list: Operation | undefined, one: Operation | undefined]>> = {
  item: {
    POST: ['createCommerceItem', undefined],
    GET: ['listCommerceItems', 'getCommerceItem'],
    PUT: [undefined, 'updateCommerceItem'],
    PATCH: [undefined, 'patchCommerceItem'],
    DELETE: [undefined, 'removeCommerceItem'],
  },
  itemvariant: {
    POST: ['createCommerceItemvariant', undefined],
    GET: ['listCommerceItemvariants', 'getCommerceItemvariant'],
    PUT: [undefined, 'updateCommerceItemvariant'],
    PATCH: [undefined, 'patchCommerceItemvariant'],
    DELETE: [undefined, 'removeCommerceItemvariant'],
  },
};

const operationOf = (kind: 'item' | 'itemvariant', method: string, one: boolean): Operation | undefined =>
  OPERATIONS[kind][method]?.[one ? 1 : 0];

/** A list page as the provider's list operations answer: `query` (substring of id, name or a metadata value), `limit`, `offset`. */
function page<T extends { id: string; name?: unknown; metadata?: unknown }>(url: URL, all: T[]): T[] {
  const query = url.searchParams.get('query') ?? '';
  const limit = nonNegativeInt(url.searchParams.get('limit'), DEFAULT_LIMIT, 'limit');
  const offset = nonNegativeInt(url.searchParams.get('offset'), 0, 'offset');
  const matching = all.filter((item) => query === '' || matches(item, query));
  return matching.slice(offset, offset + limit);
}

function errorAnswer(status: number, message: string): Answer {
  return { status, body: { status, message } };
}

function revokedMessage(status: RevokedStatus, connectionId: string): string {
  if (status === 404) return `Connection ${connectionId} not found`;
  if (status === 403) return 'The integration refused access: the connection lacks permission';
  return 'The connection is no longer authorized: the integration revoked its access';
}

function matches(item: { id: string; name?: unknown; metadata?: unknown }, query: string): boolean {
  const metadata = Array.isArray(item.metadata) ? (item.metadata as { value?: unknown }[]) : [];
  return (
    item.id.includes(query) ||
    (typeof item.name === 'string' && item.name.includes(query)) ||
    metadata.some((entry) => String(entry?.value ?? '').includes(query))
  );
}

function nonNegativeInt(raw: string | null, fallback: number, name: string): number {
  if (raw === null || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new HttpError(400, `${name} must be a non-negative integer`);
  return value;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, `Malformed path segment: ${segment}`);
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'The body is too large');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, 'The body is not valid JSON');
  }
}
