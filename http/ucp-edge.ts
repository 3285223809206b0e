import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { acpCredentialsOf, sameText } from '../commands/acp/acp-credentials.ts';
import { signResponse } from '../commands/acp/ucp-message-signature.ts';
import { ucpSigningKeyOf } from '../commands/acp/ucp-signing-key.ts';
import { uuidv5 } from '../ledger/uuid-v5.ts';
import { findWebhookSecret, versionsInForce } from '../projections/integrations/webhook-secrets-queries.ts';
import { CheckoutRefused } from './checkout-refused.ts';
import { getHttpResponseFromError } from './errors.ts';
import { checkoutCapabilities, UCP_VERSION } from './ucp-profile-body.ts';

/**
 * What every route of UCP's checkout REST binding shares (UCP 2026-04-08, `rest.openapi.json`): the tenant named by
 * the path and proven by its API key in `X-API-Key` (UCP's API-key mechanism; the key is the tenant's ACP API key),
 * the platform's profile in `UCP-Agent`, and UCP's two kinds of error:
 *
 * - a protocol error (credentials, a malformed request, an idempotency key reused, rate limits, an outage) is its HTTP
 *   status with the JSON body `{code, content}`;
 * - a business outcome (an unknown session, an item not for sale, a session in the wrong status) is the operation's 2xx
 *   (200; a create's 201, the one status UCP's OpenAPI gives it) with UCP's `error_response`:
 *   `{ucp: {version, status: "error"}, messages: [{type: "error", code, content, severity, path?}]}`.
 */
export class UcpProtocolError extends Error {
  readonly statusCode: number;
  readonly code: string;

  constructor(statusCode: number, code: string, content: string) {
    super(content);
    this.statusCode = statusCode;
    this.code = code;
  }
}

export type UcpMessageError = {
  type: 'error';
  code: string;
  content: string;
  severity: 'recoverable' | 'unrecoverable';
  path?: string;
};

/** UCP's `error_response` for a business outcome that leaves no checkout (or order) to answer. */
export const ucpErrorResponse = (
  message: Omit<UcpMessageError, 'type'>,
  capabilities: Record<string, { version: string }[]> = checkoutCapabilities(),
) => ({
  ucp: { version: UCP_VERSION, status: 'error' as const, capabilities },
  messages: [{ type: 'error' as const, ...message }],
});

/** A refusal is the agent's to fix (`recoverable`) unless no session is left to act on (UCP's `unrecoverable`). */
const FINAL = new Set(['not_found', 'invalid_state', 'not_cancelable']);

/** The refusal as a UCP message: an item that cannot be sold is UCP's standard `item_unavailable`. */
export const ucpMessageOf = (refused: CheckoutRefused): UcpMessageError => ({
  type: 'error',
  code: refused.code === 'invalid' && refused.param?.startsWith('$.line_items') ? 'item_unavailable' : refused.code,
  content: refused.message,
  severity: FINAL.has(refused.code) ? 'unrecoverable' : 'recoverable',
  ...(refused.param ? { path: refused.param } : {}),
});

type UcpAnswer = { statusCode: number; body: object; headers?: Record<string, string> };

/** The one mapping of anything a UCP route or hook threw to UCP's answer. */
export function ucpErrorOf(error: unknown): UcpAnswer {
  if (error instanceof UcpProtocolError) return { statusCode: error.statusCode, body: { code: error.code, content: error.message } };
  if (error instanceof CheckoutRefused) {
    const { type: _, ...message } = ucpMessageOf(error);
    return { statusCode: 200, body: ucpErrorResponse(message) };
  }
  const { statusCode, body, headers } = getHttpResponseFromError(error);
  const content = body.error.message;
  // A session the decider does not know is the same business outcome as one the read model does not show.
  if (statusCode === 404) return { statusCode: 200, body: ucpErrorResponse({ code: 'not_found', content, severity: 'unrecoverable' }) };
  const code =
    statusCode === 409 && body.error.details.some((detail) => detail.path === 'headers.idempotency-key')
      ? 'idempotency_conflict'
      : statusCode === 400
        ? 'invalid_request'
        : statusCode === 429
          ? 'rate_limited'
          : statusCode === 503
            ? 'service_unavailable'
            : statusCode >= 500
              ? 'internal_error'
              : body.error.code;
  return { statusCode, headers, body: { code, content } };
}

const guid = z.guid();
const PLATFORM_ACTOR_NAMESPACE = '5c3e9b1a-2f4d-4e8a-b6c7-d8e9f0a1b2c3';

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * The platform's profile URL from `UCP-Agent`, an RFC 8941 dictionary whose `profile` member is an https URL string
 * (`profile="https://platform.example/.well-known/ucp"`); undefined when the header is not that.
 */
export function platformProfileOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  for (const member of value.split(',')) {
    const match = /^\s*profile\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:;.*)?$/.exec(member);
    if (!match?.[1]) continue;
    const url = URL.canParse(match[1]) ? new URL(match[1]) : undefined;
    return url?.protocol === 'https:' ? url.toString() : undefined;
  }
  return undefined;
}

/** The tenant's secret versions in force, the current first (the previous one's during its grace), with their API keys. */
async function apiKeysOf(app: FastifyInstance, key: string, tenantId: string, orgId: string) {
  const { current, previous } = versionsInForce(await findWebhookSecret(app.ledger.db, { tenantId, orgId }), Date.now());
  return [current, ...(previous ? [previous.version] : [])].map((version) => ({
    version,
    apiKey: acpCredentialsOf(key, tenantId, orgId, version).apiKey,
  }));
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The platform's profile URL its `UCP-Agent` header gave. */
    ucpPlatformProfile?: string;
    /** The tenant's current secret version: its UCP signing key signs the answer. */
    ucpSigningVersion?: number;
  }
}

/** Registers the UCP hooks on `app`, a scope whose prefix carries `:tenant_id/:org_id`. */
export function ucpScope(app: FastifyInstance, key: string): void {
  app.setErrorHandler(async (error, request, reply: FastifyReply) => {
    const { statusCode: status, body, headers } = ucpErrorOf(error);
    // A business outcome is 2xx: the status the OpenAPI declares for the operation, 201 for a create (its only one).
    const statusCode =
      status === 200 && request.method === 'POST' && request.routeOptions.url?.endsWith('/checkout-sessions') ? 201 : status;
    if (statusCode >= 500 && statusCode !== 503) request.log.error({ err: error }, 'request failed');
    if (headers) reply.headers(headers);
    return reply.code(statusCode).send(body);
  });

  app.addHook('onRequest', async (request) => {
    const { tenant_id: tenantId, org_id: orgId } = request.params as { tenant_id?: string; org_id?: string };
    if (!guid.safeParse(tenantId).success || !guid.safeParse(orgId).success)
      throw new UcpProtocolError(404, 'not_found', 'no such merchant');
    const apiKey = header(request, 'x-api-key');
    if (!apiKey) throw new UcpProtocolError(401, 'unauthorized', 'an X-API-Key is required');
    const tenant = (tenantId as string).toLowerCase();
    const org = (orgId as string).toLowerCase();
    const versions = await apiKeysOf(app, key, tenant, org);
    // Another tenant's key, or none of this one's: the same answer, so a key tells nothing of other tenants.
    if (!versions.some((candidate) => sameText(candidate.apiKey, apiKey)))
      throw new UcpProtocolError(401, 'unauthorized', 'the API key is not valid for this merchant');
    request.ucpSigningVersion = versions[0]?.version;
    const profile = platformProfileOf(header(request, 'ucp-agent'));
    if (!profile)
      throw new UcpProtocolError(400, 'invalid_profile_url', 'the UCP-Agent header must be profile="<https URL of the platform profile>"');
    request.ucpPlatformProfile = profile;
    request.principal = {
      tenantId: tenant,
      orgId: org,
      actor: { userId: uuidv5(`${tenant}/${org}`, PLATFORM_ACTOR_NAMESPACE), email: null, ip: request.ip },
    };
    request.log = request.log.child({ tenant_id: tenant, ucp_platform: profile });
  });

  // The tenant's admission and budgets, as everywhere under /api, once its key has named it (a 429 is a protocol error).
  app.addHook('onRequest', app.rateLimits.admitTenant);

  // Every 2xx answer signed with the tenant's key (UCP recommends it for completions, allows it for the rest), over the
  // bytes as they leave: a platform verifies it with the key of that kid in the tenant's profile.
  app.addHook('onSend', async (request, reply, payload) => {
    const version = request.ucpSigningVersion;
    if (version === undefined || reply.statusCode < 200 || reply.statusCode >= 300 || typeof payload !== 'string') return payload;
    const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
    const signingKey = ucpSigningKeyOf(key, request.principal.tenantId, request.principal.orgId, version);
    reply.headers({
      'content-type': contentType,
      ...signResponse(signingKey, reply.statusCode, payload, contentType, Math.floor(Date.now() / 1000)),
    });
    return payload;
  });
}
