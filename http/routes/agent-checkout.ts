import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { acpCredentialsOf } from '../../commands/acp/acp-credentials.ts';
import { agentCheckoutAggregate, agentCheckoutIdOf } from '../../commands/acp/agent-checkout.ts';
import { findAgentCheckout } from '../../projections/checkout/checkout-queries.ts';
import { findWebhookSecret, versionsInForce } from '../../projections/integrations/webhook-secrets-queries.ts';
import { ACP_API_VERSIONS } from '../acp-edge.ts';
import { errorResponses, standardHeaders } from '../schemas.ts';
import { ucpProfilePath } from '../ucp-profile-body.ts';

/** Where the tenant's agentic checkout is, and the credentials to give its agent platform (authenticated like /api). */
export type AgentCheckoutOptions = { key: string; publicBaseUrl: string };

export const acpBasePath = (tenantId: string, orgId: string) => `/api/v1/ucp/acp/${tenantId}/${orgId}`;

const agentCheckout = z.object({
  base_url: z.string().describe('The ACP base URL: the agent calls <base_url>/checkout_sessions'),
  api_versions: z.array(z.string()),
  api_key: z.string().describe('Authorization: Bearer <api_key>'),
  signing_secret: z.string().describe('Signature: base64url HMAC-SHA256 of `<Timestamp>.<METHOD>.<path>.<raw body>`'),
  webhook_url: z.string().nullable().describe('Where order events of ACP sessions are posted (ACP order webhook); null: nowhere'),
  ucp_order_webhook_url: z
    .string()
    .nullable()
    .describe(
      "Where order events of UCP sessions are posted (UCP order webhook, signed with RFC 9421 by the profile's signing key); null: nowhere",
    ),
  webhook_secret: z
    .string()
    .describe('Verifies the order events we post: Merchant-Signature `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`'),
  version: z.number().int().describe('The webhook secret version these derive from; they rotate with it'),
  ucp_profile_url: z.string().describe("The tenant's UCP business profile (public), which declares this checkout"),
});

export default async function agentCheckoutRoutes(fastify: FastifyInstance, { key, publicBaseUrl }: AgentCheckoutOptions): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const read = async (request: FastifyRequest) => {
    const { tenantId, orgId } = request.principal;
    const { current } = versionsInForce(await findWebhookSecret(app.ledger.db, request.principal), Date.now());
    const { apiKey, signingSecret, webhookSecret } = acpCredentialsOf(key, tenantId, orgId, current);
    const settings = await findAgentCheckout(app.ledger.db, request.principal);
    return {
      base_url: new URL(acpBasePath(tenantId, orgId), publicBaseUrl).toString(),
      api_versions: [...ACP_API_VERSIONS],
      api_key: apiKey,
      signing_secret: signingSecret,
      webhook_url: settings?.webhook_url ?? null,
      ucp_order_webhook_url: settings?.ucp_order_webhook_url ?? null,
      webhook_secret: webhookSecret,
      version: current,
      ucp_profile_url: new URL(ucpProfilePath(tenantId, orgId), publicBaseUrl).toString(),
    };
  };

  app.put('/agent-checkout', {
    schema: {
      tags: ['agentic checkout (ACP)'],
      summary: "Sets where the tenant's agent platform (ACP) and UCP platform receive order events (order webhooks)",
      headers: standardHeaders,
      body: z
        .object({
          webhook_url: z
            .url({ protocol: /^https?$/ })
            .max(2_000)
            .nullable(),
          // The `webhook_url` of the platform's order capability config (UCP); left out: kept as it is.
          ucp_order_webhook_url: z
            .url({ protocol: /^https?$/ })
            .max(2_000)
            .nullable()
            .optional(),
        })
        .strict(),
      response: { 200: agentCheckout, ...errorResponses },
    },
    handler: async (request) => {
      const { tenantId, orgId } = request.principal;
      const { webhook_url: webhookUrl, ucp_order_webhook_url: ucpOrderWebhookUrl } = request.body;
      const data = { agentCheckoutId: agentCheckoutIdOf(tenantId, orgId), webhookUrl, ucpOrderWebhookUrl };
      await app.ledger.execute(request, agentCheckoutAggregate, { type: 'ConfigureAgentCheckout', data });
      return read(request);
    },
  });

  app.get('/agent-checkout', {
    schema: {
      tags: ['agentic checkout (ACP)'],
      summary: "The tenant's ACP checkout address and the API key and signing secret its agent platform uses",
      headers: standardHeaders,
      response: { 200: agentCheckout, ...errorResponses },
    },
    handler: (request) => read(request),
  });
}
