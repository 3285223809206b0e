import { z } from 'zod';

/**
 * The Agentic Commerce Protocol's checkout bodies (2026-04-17, test/fixtures/acp): what we take, as the protocol
 * defines it (its objects admit no other field), and what we answer. Fields we accept but do not act on are declared
 * `unknown` so that a valid agent request is never refused for carrying them.
 */
const address = z
  .object({
    name: z.string(),
    line_one: z.string(),
    line_two: z.string().optional(),
    city: z.string(),
    state: z.string(),
    country: z.string(),
    postal_code: z.string(),
  })
  .strict();

export const fulfillmentDetails = z
  .object({ name: z.string().optional(), phone_number: z.string().optional(), email: z.email().optional(), address: address.optional() })
  .strict();

const buyer = z.object({ email: z.email() }).passthrough();

/** ACP `Item`: no quantity in this version; the same id twice is two units (docs/decisions.md, "Agentic checkout"). */
const item = z.object({ id: z.string().min(1).max(200), name: z.string().optional(), unit_amount: z.number().int().optional() }).strict();

const selectedOption = z.object({ type: z.string(), option_id: z.string(), item_ids: z.array(z.string()) }).strict();

export const createSessionBody = z
  .object({
    line_items: z.array(item).min(1),
    currency: z.string().regex(/^[A-Za-z]{3}$/, 'must be an ISO 4217 code'),
    capabilities: z.record(z.string(), z.unknown()),
    buyer: buyer.optional(),
    fulfillment_details: fulfillmentDetails.optional(),
    fulfillment_groups: z.unknown().optional(),
    affiliate_attribution: z.unknown().optional(),
    coupons: z.unknown().optional(),
    discounts: z.unknown().optional(),
    locale: z.string().optional(),
    timezone: z.string().optional(),
    quote_id: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export const updateSessionBody = z
  .object({
    line_items: z.array(item).min(1).optional(),
    buyer: buyer.optional(),
    fulfillment_details: fulfillmentDetails.optional(),
    selected_fulfillment_options: z.array(selectedOption).max(1).optional(),
    fulfillment_groups: z.unknown().optional(),
    coupons: z.unknown().optional(),
    discounts: z.unknown().optional(),
  })
  .strict();

const paymentData = z
  .object({
    handler_id: z.string().min(1).optional(),
    instrument: z
      .object({ type: z.string(), credential: z.object({ type: z.string(), token: z.string().min(1).max(500) }).passthrough() })
      .passthrough()
      .optional(),
    billing_address: address.optional(),
    purchase_order_number: z.string().min(1).max(500).optional(),
    payment_terms: z.string().optional(),
    due_date: z.string().optional(),
    approval_required: z.boolean().optional(),
  })
  .strict()
  .refine((data) => (data.handler_id !== undefined && data.instrument !== undefined) || data.purchase_order_number !== undefined, {
    message: 'needs handler_id and instrument, or purchase_order_number',
  });

export const completeSessionBody = z
  .object({
    payment_data: paymentData,
    buyer: buyer.optional(),
    authentication_result: z.unknown().optional(),
    affiliate_attribution: z.unknown().optional(),
    risk_signals: z.unknown().optional(),
    marketing_consents: z.unknown().optional(),
  })
  .strict();

export const cancelSessionBody = z.object({ intent_trace: z.unknown().optional() }).strict();

const total = z.object({ type: z.string(), display_text: z.string(), amount: z.number().int() });

const lineItem = z.object({
  id: z.string(),
  item: z.object({ id: z.string() }),
  quantity: z.number().int(),
  name: z.string(),
  unit_amount: z.number().int(),
  product_id: z.string(),
  variant_id: z.string(),
  sku: z.string().optional(),
  availability_status: z.enum(['in_stock', 'out_of_stock']),
  available_quantity: z.number().int(),
  totals: z.array(total),
});

const message = z.object({
  type: z.literal('error'),
  code: z.string(),
  severity: z.string(),
  resolution: z.string(),
  param: z.string(),
  content_type: z.literal('plain'),
  content: z.string(),
});

export const acpOrder = z.object({
  type: z.literal('order'),
  id: z.string(),
  checkout_session_id: z.string(),
  permalink_url: z.string(),
  status: z.string(),
});

export const checkoutSession = z.object({
  id: z.string(),
  protocol: z.object({ version: z.string() }),
  capabilities: z.record(z.string(), z.unknown()),
  status: z.enum(['not_ready_for_payment', 'ready_for_payment', 'complete_in_progress', 'completed', 'canceled']),
  currency: z.string(),
  line_items: z.array(lineItem),
  buyer: z.record(z.string(), z.unknown()).optional(),
  fulfillment_details: z.record(z.string(), z.unknown()).optional(),
  fulfillment_options: z.array(z.object({ type: z.literal('shipping'), id: z.string(), title: z.string(), totals: z.array(total) })),
  selected_fulfillment_options: z.array(selectedOption).optional(),
  totals: z.array(total),
  messages: z.array(message),
  links: z.array(z.object({ type: z.string(), url: z.string() })),
  created_at: z.string(),
  updated_at: z.string(),
  order: acpOrder.optional(),
});
export type CheckoutSessionBody = z.infer<typeof checkoutSession>;

export const acpError = z.object({
  type: z.enum(['invalid_request', 'processing_error', 'service_unavailable']),
  code: z.string(),
  message: z.string(),
  param: z.string().optional(),
});

export const acpErrorResponses = { 400: acpError, 401: acpError, 404: acpError, 409: acpError, 422: acpError, 503: acpError };

export const acpHeaders = z.object({
  authorization: z.string().describe('Bearer <the tenant’s ACP API key> (GET /api/v1/ucp/agent-checkout)'),
  'api-version': z.string().describe('2026-04-17'),
  signature: z.string().describe('base64url HMAC-SHA256 of `<Timestamp>.<METHOD>.<path>.<raw body>` keyed with the signing secret'),
  timestamp: z.string().describe('RFC 3339, within 5 minutes'),
});
export const acpPostHeaders = acpHeaders.extend({ 'idempotency-key': z.string().min(1).max(255) });
