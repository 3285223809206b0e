import { UCP_VERSION } from '../commands/acp/ucp-cart.ts';
import { UCP_ORDER } from '../commands/acp/ucp-order.ts';
import { ucpProfilePath, type UcpPublicKey } from '../commands/acp/ucp-signing-key.ts';
import { ACP_API_VERSIONS } from './acp-edge.ts';

/**
 * A tenant's UCP business profile (UCP 2026-04-08, `/.well-known/ucp`): `{ucp, signing_keys}`. It declares the two
 * checkouts we serve over the same sessions: UCP's own (`dev.ucp.shopping` over REST at the tenant's UCP base, with
 * the checkout capability and its fulfillment extension) and ACP's Agentic Checkout at the tenant's ACP address, named
 * in ACP's own namespace; UCP's order capability, whose events the order webhook sends; and the one payment handler
 * both take, the delegated token.
 */
export { UCP_VERSION };
/** UCP names a capability by its governing domain; ACP's specification is published at agenticcommerce.dev. */
export const ACP_NAMESPACE = 'dev.agenticcommerce';
export const ACP_CHECKOUT_SPEC = 'https://www.agenticcommerce.dev/docs/reference/checkout';
export const ACP_PAYMENTS_SPEC = 'https://www.agenticcommerce.dev/docs/reference/payments';
/** ACP's reverse-DNS name for a tokenized card handler (openapi.agentic_checkout.yaml, `PaymentHandler.name`). */
export const TOKENIZED_CARD_HANDLER = 'dev.acp.tokenized.card';
/** The handler's id in a profile and in a checkout's `payment.instruments[].handler_id`. */
export const TOKENIZED_CARD_HANDLER_ID = 'card_tokenized';

/** UCP's shopping service and the capabilities we serve of it, with the URLs UCP publishes for them. */
export const UCP_SHOPPING = 'dev.ucp.shopping';
export const UCP_CHECKOUT = 'dev.ucp.shopping.checkout';
export const UCP_FULFILLMENT = 'dev.ucp.shopping.fulfillment';
const ucpDoc = (path: string) => `https://ucp.dev/${UCP_VERSION}/${path}`;

export { ucpProfilePath };
/** The tenant's `dev.ucp.shopping` REST endpoint: UCP's operations are relative to it (`/checkout-sessions`, …). */
export const ucpShoppingPath = (tenantId: string, orgId: string) => `/api/v1/ucp/shopping/${tenantId}/${orgId}`;

/** The payment handlers a profile declares and a UCP checkout names (`ucp.payment_handlers`). */
export const paymentHandlers = () => ({
  // Delegated payment: the token is recorded on the order for the merchant's PSP; this service captures nothing.
  [TOKENIZED_CARD_HANDLER]: [
    {
      id: TOKENIZED_CARD_HANDLER_ID,
      version: ACP_API_VERSIONS[0],
      available_instruments: [{ type: 'card' }],
      config: { delegated_payment: true, captures_payment: false },
    },
  ],
});

/** The capabilities a UCP checkout answers under: checkout and its fulfillment extension, at the profile's version. */
export const checkoutCapabilities = () => ({
  [UCP_CHECKOUT]: [{ version: UCP_VERSION }],
  [UCP_FULFILLMENT]: [{ version: UCP_VERSION, extends: UCP_CHECKOUT }],
});

export type UcpProfile = ReturnType<typeof ucpProfileBody>;

export function ucpProfileBody(endpoints: { acp: string; ucp: string }, signingKeys: UcpPublicKey[]) {
  const acpVersion = ACP_API_VERSIONS[0];
  return {
    ucp: {
      version: UCP_VERSION,
      services: {
        [UCP_SHOPPING]: [
          {
            version: UCP_VERSION,
            spec: ucpDoc('specification/overview'),
            transport: 'rest' as const,
            endpoint: endpoints.ucp,
            schema: ucpDoc('services/shopping/rest.openapi.json'),
          },
        ],
        [ACP_NAMESPACE]: [{ version: acpVersion, spec: ACP_CHECKOUT_SPEC, transport: 'rest' as const, endpoint: endpoints.acp }],
      },
      capabilities: {
        [UCP_CHECKOUT]: [
          { version: UCP_VERSION, spec: ucpDoc('specification/checkout'), schema: ucpDoc('schemas/shopping/checkout.json') },
        ],
        [UCP_FULFILLMENT]: [
          {
            version: UCP_VERSION,
            spec: ucpDoc('specification/fulfillment'),
            schema: ucpDoc('schemas/shopping/fulfillment.json'),
            extends: UCP_CHECKOUT,
          },
        ],
        // Order events go to the platform's webhook (consumers/checkout/checkout-notifier.ts).
        [UCP_ORDER]: [{ version: UCP_VERSION, spec: ucpDoc('specification/order'), schema: ucpDoc('schemas/shopping/order.json') }],
        [`${ACP_NAMESPACE}.checkout`]: [{ version: acpVersion, spec: ACP_CHECKOUT_SPEC }],
      },
      payment_handlers: paymentHandlers(),
    },
    signing_keys: signingKeys,
  };
}
