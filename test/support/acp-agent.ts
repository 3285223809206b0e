import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { requestSignature } from '../../commands/acp/acp-credentials.ts';
import { acpDeclaresStatus, acpProblems } from './acp-checkout-schema.ts';
import type { Tenant } from './client.ts';

/**
 * An agent platform calling a tenant's ACP checkout as the protocol says: API key, API-Version, Idempotency-Key on
 * every POST, each request signed. Every request body is checked against ACP's schema before it is sent, every answer
 * after (status declared by the OpenAPI document; body a CheckoutSession, a CheckoutSessionWithOrder or an Error).
 */
export type AgentCheckout = {
  base_url: string;
  api_key: string;
  signing_secret: string;
  webhook_secret: string;
  api_versions: string[];
  ucp_profile_url: string;
};

const requestDefinition: Record<string, string> = {
  create: 'CheckoutSessionCreateRequest',
  update: 'CheckoutSessionUpdateRequest',
  complete: 'CheckoutSessionCompleteRequest',
  cancel: 'CancelSessionRequest',
};

const operationOf = (method: string, path: string): { operation: string; openapiPath: string } => {
  if (path === '/checkout_sessions') return { operation: 'create', openapiPath: path };
  const action = /\/(complete|cancel)$/.exec(path)?.[1];
  if (action) return { operation: action, openapiPath: `/checkout_sessions/{checkout_session_id}/${action}` };
  return { operation: method === 'GET' ? 'get' : 'update', openapiPath: '/checkout_sessions/{checkout_session_id}' };
};

export type AgentAnswer = { status: number; body: any; headers: Headers };
export type AgentOptions = {
  idempotencyKey?: string;
  headers?: Record<string, string>;
  /** Sign with this secret instead (a forged request). */
  secret?: string;
  unsigned?: boolean;
  /** Send without checking the body against the schema (a request the protocol itself forbids). */
  unchecked?: boolean;
};

export async function acpAgentCheckout(tenant: Tenant): Promise<AgentCheckout> {
  const answer = await tenant.request<AgentCheckout>('GET', '/api/v1/ucp/agent-checkout');
  if (answer.status !== 200) throw new Error(`no agent checkout: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

export function acpAgent(checkout: AgentCheckout) {
  const base = new URL(checkout.base_url);
  const send = async (method: 'GET' | 'POST', path: string, body?: unknown, options: AgentOptions = {}): Promise<AgentAnswer> => {
    const { operation, openapiPath } = operationOf(method, path);
    const definition = requestDefinition[operation];
    if (definition && body !== undefined && !options.unchecked) expect(acpProblems(definition, body), `${operation} request`).toEqual([]);
    const raw = body === undefined ? '' : JSON.stringify(body);
    const url = `${base.pathname}${path}`;
    const timestamp = new Date().toISOString();
    const signature = requestSignature(options.secret ?? checkout.signing_secret, timestamp, method, url, raw);
    const response = await fetch(new URL(url, base.origin), {
      method,
      headers: {
        authorization: `Bearer ${checkout.api_key}`,
        'api-version': '2026-04-17',
        ...(raw ? { 'content-type': 'application/json' } : {}),
        ...(method === 'POST' ? { 'idempotency-key': options.idempotencyKey ?? randomUUID() } : {}),
        ...(options.unsigned ? {} : { signature, timestamp }),
        ...options.headers,
      },
      body: raw || undefined,
    });
    const text = await response.text();
    const answer = { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
    // Every operation is under the document's `security: bearerAuth`, so a refused credential is its 401 everywhere.
    const declared = answer.status === 401 || acpDeclaresStatus(method, openapiPath, answer.status);
    expect(declared, `${method} ${openapiPath} → ${answer.status}`).toBe(true);
    const shape = answer.status >= 400 ? 'Error' : operation === 'complete' ? 'CheckoutSessionWithOrder' : 'CheckoutSession';
    expect(acpProblems(shape, answer.body), `${method} ${path} → ${answer.status} ${text.slice(0, 500)}`).toEqual([]);
    return answer;
  };
  return {
    create: (body: unknown, options?: AgentOptions) => send('POST', '/checkout_sessions', body, options),
    update: (id: string, body: unknown, options?: AgentOptions) => send('POST', `/checkout_sessions/${id}`, body, options),
    get: (id: string, options?: AgentOptions) => send('GET', `/checkout_sessions/${id}`, undefined, options),
    complete: (id: string, body: unknown, options?: AgentOptions) => send('POST', `/checkout_sessions/${id}/complete`, body, options),
    cancel: (id: string, body?: unknown, options?: AgentOptions) => send('POST', `/checkout_sessions/${id}/cancel`, body, options),
  };
}
