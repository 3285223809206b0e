import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { acpCredentialsOf, requestSignature, sameText, SIGNATURE_SKEW_MS, type AcpCredentials } from '../commands/acp/acp-credentials.ts';
import { uuidv5 } from '../ledger/uuid-v5.ts';
import { findWebhookSecret, versionsInForce } from '../projections/integrations/webhook-secrets-queries.ts';
import { CheckoutRefused } from './checkout-refused.ts';
import { getHttpResponseFromError } from './errors.ts';
import { tooDeepBody } from './json-depth.ts';

/**
 * What every ACP route shares (Agentic Checkout 2026-04-17): the tenant named by the path and proven by its API key,
 * a supported `API-Version`, a signed body, an `Idempotency-Key` on every POST, and errors as ACP `Error` objects
 * (`{type, code, message, param?}`), not our API's error body: an agent speaks the protocol.
 */
export const ACP_API_VERSIONS = ['2026-04-17'] as const;

/** A refusal in ACP's terms; the checkout operations' own refusals (http/checkout-refused.ts) are answered alike. */
export class AcpError extends CheckoutRefused {}

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as sent, which the agent's signature covers. */
    rawBody?: string;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const guid = z.guid();
const AGENT_ACTOR_NAMESPACE = '0d8a6c1e-47b2-4f3d-9a5e-6b1c2d3e4f50';

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** JSON bodies kept as text too, decoded strictly as everywhere (http/json-body.ts), for the signature. */
const useRawJsonBodies = (app: FastifyInstance) => {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length === 0) return done(null, undefined);
    const tooDeep = tooDeepBody(bytes);
    if (tooDeep) return done(tooDeep, undefined);
    try {
      const text = utf8.decode(bytes);
      request.rawBody = text;
      done(null, JSON.parse(text));
    } catch {
      done(new AcpError(400, 'invalid', 'the request body is not valid UTF-8 JSON'), undefined);
    }
  });
};

/** The ACP `Error` for anything a route or a hook threw. */
export function acpErrorOf(error: unknown): { statusCode: number; body: Record<string, string>; headers?: Record<string, string> } {
  if (error instanceof CheckoutRefused) {
    const { statusCode, type, code, message, param } = error;
    return { statusCode, body: { type, code, message, ...(param ? { param } : {}) } };
  }
  const { statusCode, body, headers } = getHttpResponseFromError(error);
  const detail = body.error.details[0];
  const param = detail ? `$.${detail.path.replace(/^(body|params|headers|querystring)\.?/, '')}` : undefined;
  const named: Record<string, string> = param && param !== '$.' ? { param } : {};
  if (detail?.path === 'headers.idempotency-key' && statusCode === 409)
    return { statusCode: 422, body: { type: 'invalid_request', code: 'idempotency_conflict', message: body.error.message } };
  if (statusCode === 503)
    return { statusCode, headers, body: { type: 'service_unavailable', code: 'service_unavailable', message: body.error.message } };
  if (statusCode >= 500) return { statusCode, body: { type: 'processing_error', code: 'processing_error', message: body.error.message } };
  const code = statusCode === 404 ? 'not_found' : statusCode === 409 ? 'conflict' : statusCode === 400 ? 'invalid' : body.error.code;
  return { statusCode, headers, body: { type: 'invalid_request', code, message: body.error.message, ...named } };
}

/** The tenant's credentials in force: the current version's, and the previous one's during its grace. */
async function credentialsOf(app: FastifyInstance, key: string, tenantId: string, orgId: string): Promise<AcpCredentials[]> {
  const { current, previous } = versionsInForce(await findWebhookSecret(app.ledger.db, { tenantId, orgId }), Date.now());
  return [current, ...(previous ? [previous.version] : [])].map((version) => acpCredentialsOf(key, tenantId, orgId, version));
}

/** Registers the ACP hooks on `app`, a scope whose prefix carries `:tenant_id/:org_id`. */
export function acpScope(app: FastifyInstance, key: string): void {
  useRawJsonBodies(app);
  app.setErrorHandler(async (error, request, reply: FastifyReply) => {
    const { statusCode, body, headers } = acpErrorOf(error);
    if (statusCode >= 500 && statusCode !== 503) request.log.error({ err: error }, 'request failed');
    if (headers) reply.headers(headers);
    return reply.code(statusCode).send(body);
  });

  app.addHook('onRequest', async (request) => {
    const { tenant_id: tenantId, org_id: orgId } = request.params as { tenant_id?: string; org_id?: string };
    if (!guid.safeParse(tenantId).success || !guid.safeParse(orgId).success) throw new AcpError(404, 'not_found', 'no such merchant');
    const version = header(request, 'api-version');
    if (!version)
      throw new AcpError(400, 'missing_api_version', `the API-Version header is required; supported: ${ACP_API_VERSIONS.join(', ')}`);
    if (!(ACP_API_VERSIONS as readonly string[]).includes(version))
      throw new AcpError(
        400,
        'unsupported_api_version',
        `API-Version ${version} is not supported; supported: ${ACP_API_VERSIONS.join(', ')}`,
      );
    const bearer = /^Bearer (\S+)$/.exec(header(request, 'authorization') ?? '')?.[1];
    if (!bearer) throw new AcpError(401, 'unauthorized', 'a Bearer API key is required');
    const tenant = (tenantId as string).toLowerCase();
    const org = (orgId as string).toLowerCase();
    const credentials = (await credentialsOf(app, key, tenant, org)).find((c) => sameText(c.apiKey, bearer));
    // Another tenant's key, or none of this one's: the same answer, so a key tells nothing of other tenants.
    if (!credentials) throw new AcpError(401, 'unauthorized', 'the API key is not valid for this merchant');
    request.acpSigningSecret = credentials.signingSecret;
    request.principal = {
      tenantId: tenant,
      orgId: org,
      actor: { userId: uuidv5(`${tenant}/${org}`, AGENT_ACTOR_NAMESPACE), email: null, ip: request.ip },
    };
    request.log = request.log.child({ tenant_id: tenant, agent: true });
    if (request.method === 'POST' && !header(request, 'idempotency-key'))
      throw new AcpError(400, 'idempotency_key_required', 'Idempotency-Key header is required');
  });

  // The tenant's admission and budgets, as everywhere under /api, once its key has named it (a 429 is an ACP error).
  app.addHook('onRequest', app.rateLimits.admitTenant);

  // After the body is read, before it is validated: a forged body is refused before anything looks at it.
  app.addHook('preValidation', async (request) => {
    const timestamp = header(request, 'timestamp');
    const signature = header(request, 'signature');
    if (!timestamp || !signature)
      throw new AcpError(401, 'invalid_signature', 'the request must be signed (Signature and Timestamp headers)');
    const at = Date.parse(timestamp);
    if (Number.isNaN(at) || Math.abs(Date.now() - at) > SIGNATURE_SKEW_MS)
      throw new AcpError(401, 'invalid_signature', 'the Timestamp is not an RFC 3339 time within 5 minutes of ours');
    const expected = requestSignature(request.acpSigningSecret ?? '', timestamp, request.method, request.url, request.rawBody ?? '');
    if (!sameText(expected, signature)) throw new AcpError(401, 'invalid_signature', 'the signature does not match the request');
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    acpSigningSecret?: string;
  }
}
