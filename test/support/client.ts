import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { devToken } from '../../bin/token.ts';
import { TEST_DEV_SECRET } from './service-process.ts';

export type ApiResponse<T = any> = { status: number; body: T; headers: Headers };

export type Tenant = {
  tenantId: string;
  orgId: string;
  email: string;
  token: string;
  headers: Record<string, string>;
  request: <T = any>(method: string, path: string, body?: unknown, extraHeaders?: Record<string, string>) => Promise<ApiResponse<T>>;
};

const parsed = (text: string): unknown => {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text; // not JSON; keep the text so a test can show it
  }
};

export async function send<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  init: { body?: unknown; rawBody?: string | Uint8Array<ArrayBuffer>; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const hasBody = init.body !== undefined || init.rawBody !== undefined;
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...init.headers },
    body: init.rawBody ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });
  return { status: response.status, body: parsed(await response.text()) as T, headers: response.headers };
}

/** Writes `request` to the service byte for byte, for what fetch refuses to send (malformed HTTP), and reads until it closes. */
export function sendRawHttp(baseUrl: string, request: string): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(request));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', text = ''] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n', 2);
      resolve({ status: Number(head.split(' ')[1]), body: parsed(text) });
    });
  });
}

/** A tenant with its own org, user and development token. */
export async function newTenant(baseUrl: string, overrides: Partial<Pick<Tenant, 'tenantId' | 'orgId' | 'email'>> = {}): Promise<Tenant> {
  const tenantId = overrides.tenantId ?? randomUUID();
  const orgId = overrides.orgId ?? randomUUID();
  const email = overrides.email ?? `user-${tenantId.slice(0, 8)}@example.com`;
  const token = await devToken({ secret: TEST_DEV_SECRET, tenantId, orgId, email });
  const headers = { authorization: `Bearer ${token}`, 'x-tenant-id': tenantId, 'x-org-id': orgId };
  return {
    tenantId,
    orgId,
    email,
    token,
    headers,
    request: (method, path, body, extraHeaders) => send(baseUrl, method, path, { body, headers: { ...headers, ...extraHeaders } }),
  };
}
