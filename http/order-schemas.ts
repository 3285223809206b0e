import { z } from 'zod';
import { MAX_LINE_NAME, MAX_LINE_QUANTITY, MAX_ORDER_LINES, MAX_TAG } from '../commands/oms/order.ts';
import { currencyCode, decimalAmount, queryInteger, text, timestamp, uuid } from './schemas.ts';

/**
 * Payment details accepted at order creation, per provider: the transaction id must look like one
 * the provider issues. The service records the provider's authorization; it does not call the provider.
 */
const paymentTransactionPatterns = {
  stripe: /^(pi|ch|py)_[A-Za-z0-9]{8,64}$/,
  paypal: /^[A-Z0-9]{17}$/,
  adyen: /^[A-Z0-9]{16}$/,
  manual: /^[\w.:-]{1,100}$/,
} as const;
type PaymentProvider = keyof typeof paymentTransactionPatterns;
const providers = Object.keys(paymentTransactionPatterns) as [PaymentProvider, ...PaymentProvider[]];

/** The refinement below as the document states it: one branch per provider, its transaction id's pattern. */
const transactionIdOf = (provider: PaymentProvider) => ({
  type: 'object',
  properties: {
    payment_provider: { type: 'string', enum: [provider] },
    payment_transaction_id: { type: 'string', pattern: paymentTransactionPatterns[provider].source },
  },
});

const label = (max: number) => text().trim().min(1).max(max);

const lineItem = z
  .object({
    name: label(MAX_LINE_NAME),
    quantity: z.number().int().positive().max(MAX_LINE_QUANTITY),
    unit_price: decimalAmount,
    variant_id: uuid.nullish(),
    location_id: uuid.nullish(),
    sku: label(100).nullish(),
    variant_label: label(200).nullish(),
    requires_shipment: z.boolean().default(true),
  })
  .strict()
  .superRefine((line, ctx) => {
    if (line.variant_id && !line.location_id)
      ctx.addIssue({ code: 'custom', path: ['location_id'], message: 'is required when variant_id is set' });
  });

export const createOrderBody = z
  .object({
    idempotency_key: text().min(1).max(255).describe('Scoped to the tenant and org; the same key returns the original order'),
    payment_provider: z.enum(providers),
    payment_transaction_id: z.string().min(1).max(100),
    line_items: z.array(lineItem).min(1).max(MAX_ORDER_LINES),
    currency: currencyCode.default('USD'),
    customer_id: uuid.nullish(),
    sales_channel: label(200).nullish(),
    platform: label(100).nullish().describe('Originating platform label'),
    discount_total: decimalAmount.default('0.00'),
    shipping_total: decimalAmount.default('0.00'),
    tax_total: decimalAmount.default('0.00'),
    tags: z.array(label(MAX_TAG)).max(50).default([]),
  })
  .strict()
  .superRefine((order, ctx) => {
    if (!paymentTransactionPatterns[order.payment_provider].test(order.payment_transaction_id)) {
      ctx.addIssue({
        code: 'custom',
        path: ['payment_transaction_id'],
        message: `is not a well-formed ${order.payment_provider} transaction id`,
      });
    }
  })
  .meta({ anyOf: providers.map(transactionIdOf) });
export type CreateOrderBody = z.infer<typeof createOrderBody>;

const money = z.string().describe('Exact decimal string in the order currency, e.g. "19.99"');

export const orderLine = z
  .object({
    name: z.string(),
    quantity: z.number().int(),
    unit_price: money,
    line_total: money,
    variant_id: uuid.nullable(),
    location_id: uuid.nullable(),
    sku: z.string().nullable(),
    variant_label: z.string().nullable(),
    requires_shipment: z.boolean(),
  })
  .meta({ id: 'OrderLine' });

export const orderStatus = z.enum(['pending', 'confirmed', 'rejected', 'processing', 'shipped', 'delivered', 'cancelled']);
export const requestableStatus = z.enum(['processing', 'shipped', 'delivered', 'cancelled']);

export const statusHistoryEntry = z
  .object({
    status: orderStatus.describe('The status after this entry'),
    requested_status: z.string().nullable().describe('For a refused request: the status that was asked for'),
    outcome: z.enum(['applied', 'rejected']),
    reason: z.string().nullable(),
    at: timestamp,
  })
  .meta({ id: 'OrderStatusHistoryEntry' });

export const order = z
  .object({
    id: uuid,
    tenant_id: uuid,
    org_id: uuid,
    status: orderStatus,
    currency: z.string(),
    subtotal: money,
    discount_total: money,
    shipping_total: money,
    tax_total: money,
    total: money,
    payment_status: z.enum(['pending', 'authorized', 'voided']),
    rejection: z
      .object({
        reason: z.string().describe('insufficient_stock or unknown_location'),
        message: z.string(),
        line_index: z.number().int().nullable().describe("The refused line's position in line_items"),
      })
      .nullable()
      .describe('Why a rejected order was not confirmed; null otherwise'),
    payment_provider: z.string(),
    payment_transaction_id: z.string(),
    sales_channel: z.string().nullable(),
    platform: z.string().nullable(),
    customer_id: uuid.nullable(),
    idempotency_key: z.string(),
    tags: z.array(z.string()),
    line_items: z.array(orderLine),
    status_history: z.array(statusHistoryEntry),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Order' });
export type OrderBody = z.infer<typeof order>;

export const listQuery = z
  .object({
    limit: queryInteger({ min: 1, max: 100, fallback: 50 }).describe('Page size'),
    offset: queryInteger({ min: 0, fallback: 0 }).describe('Orders to skip'),
  })
  .strict();

export const orderPage = z
  .object({ data: z.array(order), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'OrderPage' });
