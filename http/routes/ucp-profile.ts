import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ucpSigningKeyOf } from '../../commands/acp/ucp-signing-key.ts';
import { findWebhookSecret, versionsInForce } from '../../projections/integrations/webhook-secrets-queries.ts';
import { errorBody } from '../schemas.ts';
import { ucpProfileBody, ucpShoppingPath } from '../ucp-profile-body.ts';
import { acpBasePath } from './agent-checkout.ts';

/**
 * GET /api/v1/ucp/merchants/{tenant_id}/{org_id}/.well-known/ucp: a tenant's UCP business profile, public as UCP
 * wants it (an agent reads it before it holds any credential). One origin serves every tenant, so the tenant is
 * addressed by the path, as its ACP address is; a tenant with its own domain can redirect its `/.well-known/ucp` here.
 */
export type UcpProfileOptions = { key: string; publicBaseUrl: string };

const versionDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const entity = { version: versionDate, spec: z.url().optional(), schema: z.url().optional() };
const publicKey = z.object({
  kid: z.string(),
  kty: z.literal('EC'),
  crv: z.literal('P-256'),
  x: z.string(),
  y: z.string(),
  use: z.literal('sig'),
  alg: z.literal('ES256'),
});
const profile = z
  .object({
    ucp: z.object({
      version: versionDate,
      services: z.record(z.string(), z.array(z.object({ ...entity, transport: z.literal('rest'), endpoint: z.url() }))),
      capabilities: z.record(z.string(), z.array(z.object({ ...entity, extends: z.string().optional() }))),
      payment_handlers: z.record(
        z.string(),
        z.array(
          z.object({
            ...entity,
            id: z.string(),
            available_instruments: z.array(z.object({ type: z.string() })),
            config: z.record(z.string(), z.unknown()),
          }),
        ),
      ),
    }),
    signing_keys: z.array(publicKey).describe('Public keys (JWK) of the tenant: the current one, and the previous during a rotation'),
  })
  .describe('UCP 2026-04-08 business profile (https://ucp.dev/2026-04-08/specification/overview)');

export default async function ucpProfileRoutes(fastify: FastifyInstance, { key, publicBaseUrl }: UcpProfileOptions): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/api/v1/ucp/merchants/:tenant_id/:org_id/.well-known/ucp', {
    schema: {
      tags: ['agentic checkout (ACP)'],
      // Public: an agent reads it before it holds any credential.
      security: [],
      summary: "A tenant's UCP business profile: its UCP and ACP checkouts, the delegated payment they record, its signing keys",
      params: z.object({ tenant_id: z.guid(), org_id: z.guid() }),
      // A closed query, as on every /api route (http/app.ts).
      querystring: z.object({}).strict(),
      response: { 200: profile, 400: errorBody, 404: errorBody, 429: errorBody, 503: errorBody },
    },
    // Anyone may ask, and each answer reads the database: a source address has a budget of its own.
    onRequest: app.rateLimits.publicAddress,
    handler: async (request, reply) => {
      const tenantId = request.params.tenant_id.toLowerCase();
      const orgId = request.params.org_id.toLowerCase();
      const { current, previous } = versionsInForce(await findWebhookSecret(app.ledger.db, { tenantId, orgId }), Date.now());
      const versions = [current, ...(previous ? [previous.version] : [])];
      const keys = versions.map((version) => ucpSigningKeyOf(key, tenantId, orgId, version).publicJwk);
      const endpoints = {
        acp: new URL(acpBasePath(tenantId, orgId), publicBaseUrl).toString(),
        ucp: new URL(ucpShoppingPath(tenantId, orgId), publicBaseUrl).toString(),
      };
      return reply.header('cache-control', 'public, max-age=300').send(ucpProfileBody(endpoints, keys));
    },
  });
}
