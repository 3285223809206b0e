import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CommerceItem, ProviderConnection, RemoteItem, WebhookSubscription } from '../../consumers/integrations/provider.ts';

/**
 * A stand-in for the connection provider (a Unified.to-style unified API) that we cannot run: a real HTTP server on
 * its own port speaking the provider's paths, bodies, status codes and headers, holding everything in memory, with a
 * control surface through which tests inject the provider's failures.
 */

export const DEFAULT_STAND_IN_TOKEN = 'dev-unified-token';

/** Every answer of the stand-in carries this header, so another process can tell it from whatever else holds a port. */
export const STAND_IN_HEADER = 'x-unified-stand-in';
/** Answers 200 to the stand-in's bearer token (401 to any other): whether a client with that token is served. */
export const STAND_IN_PROBE_PATH = '/stand-in';

export type StandInOptions = { port?: number; host?: string; token?: string };

export type StandInConnection = ProviderConnection & { workspace_id: string; categories: string[]; created_at: string };

export type StoredItem = RemoteItem & { created_at: string; updated_at: string };

/** One request the stand-in saw. `status` 0: it answered nothing (the socket was destroyed). */
export type LoggedRequest = { method: string; path: string; status: number; at: number; connectionId?: string };

export type RevokedStatus = 401 | 403 | 404;

export interface UnifiedStandIn {
  /** Base URL, no trailing slash. */
  readonly url: string;
  readonly token: string;
  close(): Promise<void>;

  createConnection(integrationType?: string, workspaceId?: string): string;
  connection(id: string): StandInConnection | undefined;
  /** The auth endpoint redirects to failure_redirect (`error=access_denied`) while on. */
  failAuth(on?: boolean): void;

  items(connectionId: string): StoredItem[];
  subscriptions(connectionId?: string): WebhookSubscription[];
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
  /** The next item create is stored, then its socket is destroyed without an answer. */
  loseNextCreateResponse(connectionId: string): void;
  clearFaults(): void;
}

type QueuedFault = { status: number; retryAfterSeconds?: number };
type Faults = { queue: QueuedFault[]; delayMs: number; revoked?: RevokedStatus; loseCreates: number };

type Answer = { status: number; body?: unknown; headers?: Record<string, string>; lose?: boolean };

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const WRITABLE_FIELDS = ['name', 'description', 'is_active', 'vendor_name', 'tags', 'metadata', 'media', 'variants'] as const;
const MAX_BODY_BYTES = 5 * 1024 * 1024;
const DEFAULT_LIMIT = 100;

const randomId = (prefix: string): string => `${prefix}_${randomBytes(8).toString('hex')}`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startUnifiedStandIn(options: StandInOptions = {}): Promise<UnifiedStandIn> {
  const token = options.token ?? DEFAULT_STAND_IN_TOKEN;
  const host = options.host ?? '127.0.0.1';

  const connections = new Map<string, StandInConnection>();
  const items = new Map<string, Map<string, StoredItem>>();
  const webhooks = new Map<string, WebhookSubscription>();
  const faults = new Map<string, Faults>();
  let log: LoggedRequest[] = [];
  let authFails = false;
  let itemSequence = 0;

  const faultsOf = (connectionId: string): Faults => {
    let found = faults.get(connectionId);
    if (!found) {
      found = { queue: [], delayMs: 0, loseCreates: 0 };
      faults.set(connectionId, found);
    }
    return found;
  };

  const createConnection = (integrationType = 'shopify', workspaceId = 'dev-workspace'): string => {
    const id = randomId('conn');
    connections.set(id, {
      id,
      integration_type: integrationType,
      categories: ['commerce'],
      workspace_id: workspaceId,
      created_at: new Date().toISOString(),
    });
    items.set(id, new Map());
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

  /** The item body as written; 400 when it is not one. */
  const itemBody = (body: unknown): CommerceItem => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'The body must be a JSON object');
    const item = body as Record<string, unknown>;
    if (typeof item.name !== 'string' || item.name === '') throw new HttpError(400, 'name is required');
    return item as CommerceItem;
  };

  async function route(req: IncomingMessage, url: URL, ctx: { connectionId?: string }): Promise<Answer> {
    const method = req.method ?? 'GET';
    const parts = url.pathname.split('/').filter(Boolean).map(decodeSegment);

    // The browser-facing start of the authorization flow: no bearer, answers a redirect.
    if (method === 'GET' && parts.length === 5 && parts[0] === 'unified' && parts[1] === 'integration' && parts[2] === 'auth') {
      return authorize(parts[3]!, parts[4]!, url.searchParams);
    }

    if (req.headers.authorization !== `Bearer ${token}`) {
      const refused = errorAnswer(
        401,
        req.headers.authorization ? 'The API token is not valid' : 'An Authorization: Bearer token is required',
      );
      return { ...refused, headers: { 'www-authenticate': 'Bearer' } };
    }

    if (method === 'GET' && url.pathname === STAND_IN_PROBE_PATH) return { status: 200, body: { service: 'unified-stand-in' } };

    if (parts[0] === 'unified' && parts[1] === 'connection' && parts.length === 3 && method === 'GET') {
      const connection = connections.get(parts[2]!);
      if (!connection) throw new HttpError(404, `Connection ${parts[2]} not found`);
      ctx.connectionId = connection.id;
      const { id, integration_type, categories, workspace_id } = connection;
      return { status: 200, body: { id, integration_type, categories, workspace_id } };
    }

    if (parts[0] === 'unified' && parts[1] === 'webhook') return webhookRoute(req, method, url, parts, ctx);

    if (parts[0] === 'commerce' && parts[2] === 'item' && (parts.length === 3 || parts.length === 4)) {
      const connectionId = parts[1]!;
      ctx.connectionId = connectionId;
      const stored = knownConnection(connectionId);
      const body = method === 'POST' || method === 'PUT' ? await readJson(req) : undefined;
      const fault = injectedFault(connectionId);
      if (fault) return fault;
      return parts.length === 3 ? itemsRoute(method, url, connectionId, stored, body) : itemRoute(method, parts[3]!, stored, body);
    }

    throw new HttpError(404, `No route for ${method} ${url.pathname}`);
  }

  function authorize(workspaceId: string, integrationType: string, query: URLSearchParams): Answer {
    const success = query.get('success_redirect');
    const failure = query.get('failure_redirect');
    const state = query.get('state');
    if (!success) throw new HttpError(400, 'success_redirect is required');
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
    if (authFails) {
      if (!failure) throw new HttpError(400, 'failure_redirect is required');
      return { status: 302, headers: { location: target(failure, { error: 'access_denied' }) } };
    }
    const id = createConnection(integrationType, workspaceId);
    return { status: 302, headers: { location: target(success, { id }) } };
  }

  async function webhookRoute(
    req: IncomingMessage,
    method: string,
    url: URL,
    parts: string[],
    ctx: { connectionId?: string },
  ): Promise<Answer> {
    if (parts.length === 2 && method === 'POST') {
      const body = (await readJson(req)) as Record<string, unknown> | undefined;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'The body must be a JSON object');
      const missing = ['connection_id', 'hook_url', 'object_type', 'event'].filter(
        (key) => typeof body[key] !== 'string' || body[key] === '',
      );
      if (missing.length > 0) throw new HttpError(400, `Missing or empty: ${missing.join(', ')}`);
      const connectionId = body.connection_id as string;
      ctx.connectionId = connectionId;
      knownConnection(connectionId);
      const fault = injectedFault(connectionId);
      if (fault) return fault;
      const subscription: WebhookSubscription = {
        id: randomId('wh'),
        connection_id: connectionId,
        hook_url: body.hook_url as string,
        object_type: body.object_type as string,
        event: body.event as string,
      };
      webhooks.set(subscription.id, subscription);
      return { status: 200, body: subscription };
    }
    if (parts.length === 2 && method === 'GET') {
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
      const now = new Date().toISOString();
      const item: StoredItem = { ...itemBody(body), id: `item_${++itemSequence}`, created_at: now, updated_at: now };
      stored.set(item.id, item);
      const f = faults.get(connectionId);
      if (f && f.loseCreates > 0) {
        f.loseCreates--;
        return { status: 200, lose: true };
      }
      return { status: 200, body: item };
    }
    if (method === 'GET') {
      const query = url.searchParams.get('query') ?? '';
      const limit = nonNegativeInt(url.searchParams.get('limit'), DEFAULT_LIMIT, 'limit');
      const offset = nonNegativeInt(url.searchParams.get('offset'), 0, 'offset');
      const matching = [...stored.values()].filter((item) => query === '' || matches(item, query));
      return { status: 200, body: matching.slice(offset, offset + limit) };
    }
    throw new HttpError(405, `${method} is not allowed on ${url.pathname}`);
  }

  function itemRoute(method: string, itemId: string, stored: Map<string, StoredItem>, body: unknown): Answer {
    const existing = stored.get(itemId);
    if (!existing) throw new HttpError(404, `Item ${itemId} not found`);
    if (method === 'GET') return { status: 200, body: existing };
    if (method === 'PUT') {
      const written = itemBody(body) as Record<string, unknown>;
      const kept = Object.fromEntries(Object.entries(existing).filter(([key]) => !(WRITABLE_FIELDS as readonly string[]).includes(key)));
      const replaced = Object.fromEntries(WRITABLE_FIELDS.filter((key) => key in written).map((key) => [key, written[key]]));
      const updated = {
        ...kept,
        ...replaced,
        id: existing.id,
        created_at: existing.created_at,
        updated_at: new Date().toISOString(),
      } as StoredItem;
      stored.set(itemId, updated);
      return { status: 200, body: updated };
    }
    if (method === 'DELETE') {
      stored.delete(itemId);
      return { status: 200 };
    }
    throw new HttpError(405, `${method} is not allowed on an item`);
  }

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  // The client's pool keeps sockets alive; answer on them for longer than its idle timeout so it never races a close.
  server.keepAliveTimeout = 15_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const ctx: { connectionId?: string } = {};
    let answer: Answer;
    try {
      answer = await route(req, url, ctx);
    } catch (error) {
      answer = error instanceof HttpError ? errorAnswer(error.status, error.message) : errorAnswer(500, `Stand-in fault: ${String(error)}`);
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
    if (answer.body !== undefined) {
      const payload = JSON.stringify(answer.body);
      headers['content-type'] = 'application/json; charset=utf-8';
      headers['content-length'] = String(Buffer.byteLength(payload));
      res.writeHead(answer.status, headers).end(payload);
    } else {
      headers['content-length'] = '0';
      res.writeHead(answer.status, headers).end();
    }
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

  return {
    url,
    token,
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
    items: (connectionId) => structuredClone([...(items.get(connectionId)?.values() ?? [])]),
    subscriptions: (connectionId) =>
      structuredClone([...webhooks.values()].filter((w) => connectionId === undefined || w.connection_id === connectionId)),
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
    loseNextCreateResponse(connectionId) {
      faultsOf(connectionId).loseCreates++;
    },
    clearFaults() {
      faults.clear();
    },
  };
}

function errorAnswer(status: number, message: string): Answer {
  return { status, body: { status, message } };
}

function revokedMessage(status: RevokedStatus, connectionId: string): string {
  if (status === 404) return `Connection ${connectionId} not found`;
  if (status === 403) return 'The integration refused access: the connection lacks permission';
  return 'The connection is no longer authorized: the integration revoked its access';
}

function matches(item: StoredItem, query: string): boolean {
  return (
    item.id.includes(query) ||
    (item.name ?? '').includes(query) ||
    (item.metadata ?? []).some((entry) => String(entry?.value ?? '').includes(query))
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
