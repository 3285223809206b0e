import type { UcpPublicKey } from '../commands/acp/ucp-signing-key.ts';
import { ACP_API_VERSIONS } from './acp-edge.ts';

/**
 * A tenant's UCP business profile (UCP 2026-04-08, `/.well-known/ucp`): `{ucp, signing_keys}`. Its one service and
 * capability are the checkout we serve, ACP's Agentic Checkout at the tenant's ACP address, named in ACP's own
 * namespace: UCP's `dev.ucp.shopping` REST binding (`/checkout-sessions`, UCP bodies) is not what those routes speak,
 * and UCP's negotiation is opt-in, so a platform that speaks only UCP's binding finds nothing it could misuse.
 */
export const UCP_VERSION = '2026-04-08';
/** UCP names a capability by its governing domain; ACP's specification is published at agenticcommerce.dev. */
export const ACP_NAMESPACE = 'dev.agenticcommerce';
export const ACP_CHECKOUT_SPEC = 'https://www.agenticcommerce.dev/docs/reference/checkout';
export const ACP_PAYMENTS_SPEC = 'https://www.agenticcommerce.dev/docs/reference/payments';
/** ACP's reverse-DNS name for a tokenized card handler (openapi.agentic_checkout.yaml, `PaymentHandler.name`). */
export const TOKENIZED_CARD_HANDLER = 'dev.acp.tokenized.card';

/** Where a tenant's profile is served (http/routes/ucp-profile.ts). */
export const ucpProfilePath = (tenantId: string, orgId: string) => `/api/v1/ucp/merchants/${tenantId}/${orgId}/.well-known/ucp`;

export type UcpProfile = ReturnType<typeof ucpProfileBody>;

export function ucpProfileBody(acpBaseUrl: string, signingKeys: UcpPublicKey[]) {
  const acpVersion = ACP_API_VERSIONS[0];
  return {
    ucp: {
      version: UCP_VERSION,
      services: {
        [ACP_NAMESPACE]: [{ version: acpVersion, spec: ACP_CHECKOUT_SPEC, transport: 'rest' as const, endpoint: acpBaseUrl }],
      },
      capabilities: {
        [`${ACP_NAMESPACE}.checkout`]: [{ version: acpVersion, spec: ACP_CHECKOUT_SPEC }],
      },
      payment_handlers: {
        // Delegated payment: the token is recorded on the order for the merchant's PSP; this service captures nothing.
        [TOKENIZED_CARD_HANDLER]: [
          {
            id: 'card_tokenized',
            version: acpVersion,
            available_instruments: [{ type: 'card' }],
            config: { delegated_payment: true, captures_payment: false },
          },
        ],
      },
    },
    signing_keys: signingKeys,
  };
}
