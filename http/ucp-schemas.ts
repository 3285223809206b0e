import { z } from 'zod';

/**
 * UCP's checkout bodies over REST (2026-04-08, test/fixtures/ucp): what each operation takes, as UCP's schemas mark it
 * per operation, and what it answers (a checkout with the fulfillment extension, or an `error_response`). UCP's
 * objects are open (`additionalProperties: true`: extensions compose onto them), so fields we do not act on are
 * accepted and ignored rather than refused; what we read is checked.
 */
const text = z.string().max(2_000);

export const postalAddress = z.looseObject({
  street_address: text.optional(),
  extended_address: text.optional(),
  address_locality: text.optional(),
  address_region: text.optional(),
  address_country: text.optional(),
  postal_code: text.optional(),
  first_name: text.optional(),
  last_name: text.optional(),
  phone_number: text.optional(),
});
const destination = postalAddress.extend({ id: text.optional() });

export const buyer = z.looseObject({
  first_name: text.optional(),
  last_name: text.optional(),
  email: text.optional(),
  phone_number: text.optional(),
});

const lineItemRequest = z.looseObject({
  id: text.optional(),
  item: z.looseObject({ id: z.string().min(1).max(200) }),
  quantity: z.number().int().min(1),
  parent_id: text.optional(),
});

const fulfillmentMethodRequest = z.looseObject({
  id: text.optional(),
  type: z.enum(['shipping', 'pickup']).optional(),
  line_item_ids: z.array(text).optional(),
  destinations: z.array(destination).max(20).optional(),
  selected_destination_id: text.nullable().optional(),
  groups: z.array(z.looseObject({ id: text.optional(), selected_option_id: text.nullable().optional() })).optional(),
});
export const fulfillmentRequest = z.looseObject({ methods: z.array(fulfillmentMethodRequest).optional() });

const instrument = z.looseObject({
  id: text,
  handler_id: text,
  type: text,
  selected: z.boolean().optional(),
  credential: z.looseObject({ type: text, token: z.string().min(1).max(500).optional() }).optional(),
  billing_address: postalAddress.optional(),
});
const paymentRequest = z.looseObject({ instruments: z.array(instrument).max(20).optional() });

const openFields = {
  buyer: buyer.optional(),
  context: z
    .looseObject({
      currency: z
        .string()
        .regex(/^[A-Za-z]{3}$/, 'must be an ISO 4217 code')
        .optional(),
    })
    .optional(),
  fulfillment: fulfillmentRequest.optional(),
  payment: paymentRequest.optional(),
  signals: z.unknown().optional(),
  attribution: z.unknown().optional(),
};

export const createCheckoutBody = z.looseObject({ line_items: z.array(lineItemRequest).max(250), ...openFields });
/** `id` is deprecated in the body (the path names the session) and ignored. */
export const updateCheckoutBody = z.looseObject({ id: text.optional(), line_items: z.array(lineItemRequest).max(250), ...openFields });
export const completeCheckoutBody = z.looseObject({
  payment: paymentRequest.extend({ instruments: z.array(instrument).min(1).max(20) }),
  signals: z.unknown().optional(),
  attribution: z.unknown().optional(),
});
/** UCP's cancel has no request body; an empty object, as its examples send, is taken too. */
export const cancelCheckoutBody = z.looseObject({});

export type UcpLineItemRequest = z.infer<typeof lineItemRequest>;
export type UcpFulfillmentRequest = z.infer<typeof fulfillmentRequest>;
export type UcpInstrument = z.infer<typeof instrument>;
export type UcpBuyer = z.infer<typeof buyer>;

// ── Answers ────────────────────────────────────────────────────────────────
const total = z.object({ type: z.string(), amount: z.number().int(), display_text: z.string().optional() });
const entity = z.looseObject({ version: z.string() });
const ucpMeta = z.object({
  version: z.string(),
  status: z.enum(['success', 'error']),
  capabilities: z.record(z.string(), z.array(entity)),
  payment_handlers: z.record(z.string(), z.array(entity)).optional(),
});
const message = z.object({
  type: z.literal('error'),
  code: z.string(),
  content: z.string(),
  severity: z.enum(['recoverable', 'unrecoverable']),
  path: z.string().optional(),
});
const option = z.object({ id: z.string(), title: z.string(), totals: z.array(total) });

export const ucpCheckout = z.object({
  ucp: ucpMeta,
  id: z.string(),
  status: z.enum(['incomplete', 'ready_for_complete', 'complete_in_progress', 'completed', 'canceled']),
  currency: z.string(),
  line_items: z.array(
    z.object({
      id: z.string(),
      item: z.object({ id: z.string(), title: z.string(), price: z.number().int() }),
      quantity: z.number().int(),
      totals: z.array(total),
    }),
  ),
  buyer: z.record(z.string(), z.unknown()).optional(),
  totals: z.array(total),
  messages: z.array(message),
  links: z.array(z.object({ type: z.string(), url: z.string() })),
  fulfillment: z.object({
    methods: z.array(
      z.object({
        id: z.string(),
        type: z.literal('shipping'),
        line_item_ids: z.array(z.string()),
        destinations: z.array(z.record(z.string(), z.string())),
        selected_destination_id: z.string().nullable(),
        groups: z.array(
          z.object({
            id: z.string(),
            line_item_ids: z.array(z.string()),
            selected_option_id: z.string().nullable(),
            options: z.array(option),
          }),
        ),
      }),
    ),
  }),
  order: z.object({ id: z.string(), permalink_url: z.string() }).optional(),
});
export type UcpCheckout = z.infer<typeof ucpCheckout>;

const lineRef = z.object({ id: z.string(), quantity: z.number().int() });

/** UCP's order (`order.json`), as `ucpOrderOf` (commands/acp/ucp-order.ts) builds it. */
export const ucpOrder = z.object({
  ucp: ucpMeta.partial({ status: true }),
  id: z.string(),
  checkout_id: z.string(),
  permalink_url: z.string(),
  currency: z.string(),
  line_items: z.array(
    z.object({
      id: z.string(),
      item: z.object({ id: z.string(), title: z.string(), price: z.number().int() }),
      quantity: z.object({ original: z.number().int(), total: z.number().int(), fulfilled: z.number().int() }),
      totals: z.array(total),
      status: z.enum(['processing', 'partial', 'fulfilled', 'removed']),
    }),
  ),
  fulfillment: z.object({
    expectations: z.array(
      z.object({
        id: z.string(),
        line_items: z.array(lineRef),
        method_type: z.enum(['shipping', 'pickup', 'digital']),
        destination: z.record(z.string(), z.string()),
        description: z.string().optional(),
      }),
    ),
    events: z.array(z.object({ id: z.string(), occurred_at: z.string(), type: z.string(), line_items: z.array(lineRef) })),
  }),
  adjustments: z.array(
    z.object({
      id: z.string(),
      type: z.string(),
      occurred_at: z.string(),
      status: z.enum(['pending', 'completed', 'failed']),
      line_items: z.array(lineRef),
    }),
  ),
  totals: z.array(total),
});

/** UCP's `error_response`: a business outcome with no checkout to answer. */
export const ucpErrorResponse = z.object({ ucp: ucpMeta, messages: z.array(message).min(1), continue_url: z.string().optional() });
/** A protocol error's body (UCP's REST binding: the HTTP status with `code` and `content`). */
export const ucpProtocolError = z.object({ code: z.string(), content: z.string() });

/** 2xx: a checkout or an `error_response` (the OpenAPI's `checkout_response`); otherwise a protocol error. */
export const ucpResponses = (status: 200 | 201) => ({
  [status]: z.union([ucpCheckout, ucpErrorResponse]),
  400: ucpProtocolError,
  401: ucpProtocolError,
  409: ucpProtocolError,
  429: ucpProtocolError,
  503: ucpProtocolError,
});

/** 200: an order or an `error_response` (the OpenAPI's `order_response`); otherwise a protocol error. */
export const ucpOrderResponses = {
  200: z.union([ucpOrder, ucpErrorResponse]),
  400: ucpProtocolError,
  401: ucpProtocolError,
  429: ucpProtocolError,
  503: ucpProtocolError,
};

export const ucpHeaders = z.object({
  'x-api-key': z.string().describe('The tenant’s API key (GET /api/v1/ucp/agent-checkout, `api_key`)'),
  'ucp-agent': z.string().describe('profile="<https URL of the platform’s UCP profile>" (RFC 8941 dictionary)'),
  'request-id': z.guid().describe('A UUID naming the request, for tracing'),
});
export const ucpWriteHeaders = ucpHeaders.extend({ 'idempotency-key': z.guid().describe('A UUID; a retry sends the same') });
