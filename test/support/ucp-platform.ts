import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import {
  ucpDeclaresStatus,
  ucpOrderResponseProblems,
  ucpProtocolErrorProblems,
  ucpRequestProblems,
  ucpResponseProblems,
  type UcpOperation,
} from './ucp-checkout-schema.ts';

/**
 * A UCP platform calling a business's checkout over REST as UCP 2026-04-08 says: at the `dev.ucp.shopping` endpoint its
 * profile declares, with its API key (`X-API-Key`), its own profile in `UCP-Agent`, a `Request-Id`, and an
 * `Idempotency-Key` (UUID) on every write. Every request body is checked against UCP's request schema for its operation
 * before it is sent; every answer after: a 2xx the OpenAPI declares for the operation, its body a checkout or an
 * `error_response` (an order or an `error_response` for Get Order), or else a protocol error `{code, content}`.
 */
/** `raw`: the body as received, which the business's signature covers. */
export type UcpAnswer = { status: number; body: any; headers: Headers; raw: string };
export type UcpOptions = {
  idempotencyKey?: string;
  headers?: Record<string, string>;
  /** Send without the API key. */
  anonymous?: boolean;
};

export const PLATFORM_PROFILE = 'https://platform.example/.well-known/ucp';

const operationOf = (method: string, path: string): { operation?: UcpOperation; openapiPath: string } => {
  if (path.startsWith('/orders/')) return { openapiPath: '/orders/{id}' };
  if (path === '/checkout-sessions') return { operation: 'create', openapiPath: path };
  const action = /\/(complete|cancel)$/.exec(path)?.[1];
  if (action === 'complete') return { operation: 'complete', openapiPath: '/checkout-sessions/{id}/complete' };
  if (action === 'cancel') return { openapiPath: '/checkout-sessions/{id}/cancel' };
  return { operation: method === 'PUT' ? 'update' : undefined, openapiPath: '/checkout-sessions/{id}' };
};

export function ucpPlatform(endpoint: string, apiKey: string) {
  const base = endpoint.replace(/\/$/, '');
  const send = async (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, options: UcpOptions = {}): Promise<UcpAnswer> => {
    const { operation, openapiPath } = operationOf(method, path);
    if (operation && body !== undefined) expect(ucpRequestProblems(operation, body), `${operation} request`).toEqual([]);
    const raw = body === undefined ? '' : JSON.stringify(body);
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(options.anonymous ? {} : { 'x-api-key': apiKey }),
        'ucp-agent': `profile="${PLATFORM_PROFILE}"`,
        'request-id': randomUUID(),
        ...(raw ? { 'content-type': 'application/json' } : {}),
        ...(method === 'GET' ? {} : { 'idempotency-key': options.idempotencyKey ?? randomUUID() }),
        ...options.headers,
      },
      body: raw || undefined,
    });
    const text = await response.text();
    const answer = { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers, raw: text };
    const at = `${method} ${path} → ${answer.status} ${text.slice(0, 500)}`;
    if (answer.status < 300) {
      expect(ucpDeclaresStatus(method, openapiPath, answer.status), at).toBe(true);
      const problems = openapiPath === '/orders/{id}' ? ucpOrderResponseProblems(answer.body) : ucpResponseProblems(answer.body);
      expect(problems, at).toEqual([]);
    } else expect(ucpProtocolErrorProblems(answer.body), at).toEqual([]);
    return answer;
  };
  return {
    create: (body: unknown, options?: UcpOptions) => send('POST', '/checkout-sessions', body, options),
    get: (id: string, options?: UcpOptions) => send('GET', `/checkout-sessions/${id}`, undefined, options),
    update: (id: string, body: unknown, options?: UcpOptions) => send('PUT', `/checkout-sessions/${id}`, body, options),
    complete: (id: string, body: unknown, options?: UcpOptions) => send('POST', `/checkout-sessions/${id}/complete`, body, options),
    cancel: (id: string, options?: UcpOptions) => send('POST', `/checkout-sessions/${id}/cancel`, undefined, options),
    getOrder: (id: string, options?: UcpOptions) => send('GET', `/orders/${id}`, undefined, options),
  };
}
