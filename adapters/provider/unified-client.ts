import type { Agent, Dispatcher } from 'undici';
import {
  ProviderError,
  REFERENCE_SLUG,
  type AuthUrlRequest,
  type CommerceItem,
  type CommerceItemVariant,
  type ConnectionProvider,
  type ProviderConnection,
  type RemoteItem,
  type RemoteItemVariant,
  type WebhookRequest,
  type WebhookSubscription,
} from './provider.ts';

export type UnifiedClientOptions = {
  /** The provider's API root, e.g. `https://api.unified.to` (a path prefix is kept). */
  baseUrl: string;
  token: string;
  /** The longest one call may take, from connecting to the last byte of the answer. */
  timeoutMs: number;
  /** Sockets kept open to the provider; the push worker calls with high concurrency. */
  connections?: number;
};

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
type Answer = { status: number; body: unknown };

const ERROR_EXCERPT_CHARS = 200;
const PAGE_SIZE = 100;
// A reference is a substring match at the provider, so a short one can match many items; stop somewhere.
const MAX_REFERENCE_PAGES = 50;

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** The connection provider over HTTP: Unified.to's unified API, or the stand-in in stack/unified. */
export class UnifiedClient implements ConnectionProvider {
  private readonly origin: string;
  private readonly prefix: string;
  private readonly token: string;
  private readonly timeoutMs: number;
  private readonly connections: number;
  /** undici and the pool, made at the first call (about 5 MB of heap in every process that never calls the provider). */
  private pool: Promise<{ agent: Agent; request: (typeof import('undici'))['request'] }> | undefined;
  private closed = false;

  constructor({ baseUrl, token, timeoutMs, connections = 64 }: UnifiedClientOptions) {
    const url = new URL(baseUrl);
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.token = token;
    this.timeoutMs = timeoutMs;
    this.connections = connections;
  }

  private pooled() {
    if (this.closed) return Promise.reject(new Error('the provider client is closed'));
    this.pool ??= import('undici').then(({ Agent, request }) => ({
      request,
      agent: new Agent({
        connections: this.connections,
        keepAliveTimeout: 10_000,
        keepAliveMaxTimeout: 60_000,
        connect: { timeout: this.timeoutMs },
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      }),
    }));
    return this.pool;
  }

  authUrl(req: AuthUrlRequest): string {
    const url = new URL(
      `${this.origin}${this.prefix}/unified/integration/auth/${encodeURIComponent(req.workspaceId)}/${encodeURIComponent(req.integrationType)}`,
    );
    // Without redirect=true the provider answers the URL as text; a browser sent here must be redirected to the consent.
    url.searchParams.set('redirect', 'true');
    url.searchParams.set('success_redirect', req.successRedirect);
    url.searchParams.set('failure_redirect', req.failureRedirect);
    url.searchParams.set('state', req.state);
    // Repeated, as the provider's SDK sends an array query parameter (form style, exploded).
    for (const scope of req.scopes ?? []) url.searchParams.append('scopes', scope);
    if (req.env) url.searchParams.set('env', req.env);
    return url.toString();
  }

  async getConnection(connectionId: string): Promise<ProviderConnection | undefined> {
    const answer = await this.call('GET', `/unified/connection/${seg(connectionId)}`, { absentOn404: true });
    if (answer.status === 404) return undefined;
    return expectObjectWithId<ProviderConnection>(answer, 'GET', `/unified/connection/${seg(connectionId)}`);
  }

  async createItem(connectionId: string, item: CommerceItem): Promise<RemoteItem> {
    const path = `/commerce/${seg(connectionId)}/item`;
    return expectObjectWithId<RemoteItem>(await this.call('POST', path, { body: item }), 'POST', path);
  }

  async updateItem(connectionId: string, itemId: string, item: CommerceItem): Promise<RemoteItem> {
    const path = `/commerce/${seg(connectionId)}/item/${seg(itemId)}`;
    return expectObjectWithId<RemoteItem>(await this.call('PUT', path, { body: item }), 'PUT', path);
  }

  async deleteItem(connectionId: string, itemId: string): Promise<void> {
    await this.call('DELETE', `/commerce/${seg(connectionId)}/item/${seg(itemId)}`, { absentOn404: true, ignoreBody: true });
  }

  async getItem(connectionId: string, itemId: string): Promise<RemoteItem | undefined> {
    const path = `/commerce/${seg(connectionId)}/item/${seg(itemId)}`;
    const answer = await this.call('GET', path, { absentOn404: true });
    if (answer.status === 404) return undefined;
    return expectObjectWithId<RemoteItem>(answer, 'GET', path);
  }

  async findItemByReference(connectionId: string, reference: string): Promise<RemoteItem | undefined> {
    for (let page = 0; page < MAX_REFERENCE_PAGES; page++) {
      const query = new URLSearchParams({ query: reference, limit: String(PAGE_SIZE), offset: String(page * PAGE_SIZE) });
      const path = `/commerce/${seg(connectionId)}/item?${query.toString()}`;
      const answer = await this.call('GET', path);
      if (!Array.isArray(answer.body)) throw malformed('GET', path, answer.status, 'a list of items');
      const items = answer.body as RemoteItem[];
      const found = items.find((item) => item?.metadata?.some((entry) => entry?.slug === REFERENCE_SLUG && entry.value === reference));
      if (found) return found;
      if (items.length < PAGE_SIZE) return undefined;
    }
    return undefined;
  }

  async createItemVariant(connectionId: string, variant: CommerceItemVariant): Promise<RemoteItemVariant> {
    const path = `/commerce/${seg(connectionId)}/itemvariant`;
    return expectObjectWithId<RemoteItemVariant>(await this.call('POST', path, { body: variant }), 'POST', path);
  }

  async updateItemVariant(connectionId: string, variantId: string, variant: CommerceItemVariant): Promise<RemoteItemVariant> {
    const path = `/commerce/${seg(connectionId)}/itemvariant/${seg(variantId)}`;
    return expectObjectWithId<RemoteItemVariant>(await this.call('PUT', path, { body: variant }), 'PUT', path);
  }

  async deleteItemVariant(connectionId: string, variantId: string): Promise<void> {
    await this.call('DELETE', `/commerce/${seg(connectionId)}/itemvariant/${seg(variantId)}`, { absentOn404: true, ignoreBody: true });
  }

  async listItemVariants(connectionId: string, itemId: string): Promise<RemoteItemVariant[]> {
    const found: RemoteItemVariant[] = [];
    for (let page = 0; page < MAX_REFERENCE_PAGES; page++) {
      const query = new URLSearchParams({ item_id: itemId, limit: String(PAGE_SIZE), offset: String(page * PAGE_SIZE) });
      const path = `/commerce/${seg(connectionId)}/itemvariant?${query.toString()}`;
      const answer = await this.call('GET', path);
      if (!Array.isArray(answer.body)) throw malformed('GET', path, answer.status, 'a list of item variants');
      const variants = answer.body as RemoteItemVariant[];
      found.push(...variants.filter((v) => typeof v?.id === 'string'));
      if (variants.length < PAGE_SIZE) break;
    }
    return found;
  }

  async createWebhook(subscription: WebhookRequest): Promise<WebhookSubscription> {
    const body = {
      connection_id: subscription.connection_id,
      hook_url: subscription.hook_url,
      object_type: subscription.object_type,
      event: subscription.event,
    };
    return expectObjectWithId<WebhookSubscription>(await this.call('POST', '/unified/webhook', { body }), 'POST', '/unified/webhook');
  }

  async listWebhooks(connectionId: string): Promise<WebhookSubscription[]> {
    const path = `/unified/webhook?${new URLSearchParams({ connection_id: connectionId }).toString()}`;
    const answer = await this.call('GET', path);
    if (!Array.isArray(answer.body)) throw malformed('GET', path, answer.status, 'a list of webhooks');
    return answer.body as WebhookSubscription[];
  }

  /** Closes the pooled sockets once the calls under way have their answers. */
  async close(): Promise<void> {
    this.closed = true;
    const pool = await this.pool;
    await pool?.agent.close();
  }

  private async call(
    method: Method,
    path: string,
    options: { body?: unknown; absentOn404?: boolean; ignoreBody?: boolean } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'application/json' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const signal = AbortSignal.timeout(this.timeoutMs);
    let response: Dispatcher.ResponseData;
    try {
      const { agent, request } = await this.pooled();
      response = await request(`${this.origin}${this.prefix}${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        dispatcher: agent,
        signal,
      });
    } catch (error) {
      throw noAnswer(method, path, error, signal, this.timeoutMs);
    }

    const { statusCode: status } = response;
    let text: string;
    try {
      // Read to the end every time, errors included: an unread body keeps its socket out of the pool.
      text = await response.body.text();
    } catch (error) {
      throw noAnswer(method, path, error, signal, this.timeoutMs, status);
    }

    if (status >= 200 && status < 300) {
      if (options.ignoreBody || text.trim() === '') return { status, body: undefined };
      try {
        return { status, body: JSON.parse(text) };
      } catch {
        throw new ProviderError('server', `${method} ${path} answered ${status} with a body that is not JSON: ${excerpt(text)}`, status);
      }
    }
    if (status === 404 && options.absentOn404) return { status, body: undefined };
    throw httpFailure(method, path, status, text, response.headers['retry-after']);
  }
}

const seg = (value: string): string => encodeURIComponent(value);

function expectObjectWithId<T extends { id: string }>(answer: Answer, method: Method, path: string): T {
  const body = answer.body as { id?: unknown } | undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof body.id !== 'string') {
    throw malformed(method, path, answer.status, 'an object with an id');
  }
  return body as T;
}

function malformed(method: Method, path: string, status: number, expected: string): ProviderError {
  return new ProviderError('server', `${method} ${path} answered ${status} without ${expected}`, status);
}

function httpFailure(
  method: Method,
  path: string,
  status: number,
  text: string,
  retryAfterHeader: string | string[] | undefined,
): ProviderError {
  const detail = errorDetail(text);
  const said = detail ? `: ${detail}` : '';
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(Array.isArray(retryAfterHeader) ? retryAfterHeader[0] : retryAfterHeader);
    const wait = retryAfterMs === undefined ? '' : ` (retry after ${retryAfterMs} ms)`;
    return new ProviderError('rate_limited', `${method} ${path} was rate limited (429)${wait}${said}`, status, retryAfterMs);
  }
  if (status >= 500) return new ProviderError('server', `${method} ${path} failed at the provider (${status})${said}`, status);
  if (status === 401 || status === 403) {
    return new ProviderError('auth', `${method} ${path} was not authorized (${status})${said}`, status);
  }
  if (status === 404) return new ProviderError('not_found', `${method} ${path} found nothing (404)${said}`, status);
  return new ProviderError('rejected', `${method} ${path} was rejected (${status})${said}`, status);
}

/** The provider's own explanation, short: its `message`/`error` field when the body is JSON, else the text itself. */
function errorDetail(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '';
  try {
    const parsed = JSON.parse(trimmed) as unknown;
    if (typeof parsed === 'object' && parsed !== null) {
      const { message, error } = parsed as { message?: unknown; error?: unknown };
      if (typeof message === 'string' && message !== '') return excerpt(message);
      if (typeof error === 'string' && error !== '') return excerpt(error);
    }
  } catch {
    // not JSON: the text is the explanation
  }
  return excerpt(trimmed);
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > ERROR_EXCERPT_CHARS ? `${flat.slice(0, ERROR_EXCERPT_CHARS)}…` : flat;
}

/** `Retry-After` as delta-seconds or an HTTP-date, in ms from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

function noAnswer(method: Method, path: string, error: unknown, signal: AbortSignal, timeoutMs: number, status?: number): ProviderError {
  const during = status === undefined ? '' : ` while reading its ${status} answer`;
  const reason = describe(error);
  if (signal.aborted || isTimeout(error)) {
    return new ProviderError('timeout', `${method} ${path} timed out after ${timeoutMs} ms${during} (${reason})`, status);
  }
  return new ProviderError('network', `${method} ${path} got no answer${during}: ${reason}`, status);
}

function isTimeout(error: unknown): boolean {
  return causes(error).some((e) => e.name === 'TimeoutError' || (typeof e.code === 'string' && TIMEOUT_CODES.has(e.code)));
}

function describe(error: unknown): string {
  const chain = causes(error);
  const first = chain[0];
  if (!first) return String(error);
  const code = chain.map((e) => e.code).find((c) => typeof c === 'string');
  const message = first.message || chain.map((e) => e.message).find(Boolean) || first.name;
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

type ErrorLike = { name: string; message: string; code?: unknown };

/** The error, its causes and (for a failed happy-eyeballs connect) the errors it aggregates. */
function causes(error: unknown, depth = 0): ErrorLike[] {
  if (!(error instanceof Error) || depth > 5) return [];
  const own: ErrorLike = { name: error.name, message: error.message, code: (error as { code?: unknown }).code };
  const nested = error instanceof AggregateError ? error.errors.flatMap((e: unknown) => causes(e, depth + 1)) : [];
  return [own, ...nested, ...causes(error.cause, depth + 1)];
}
