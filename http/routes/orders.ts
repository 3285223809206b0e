import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { orderAggregate, orderIdOf, type PlaceOrder } from '../../commands/oms/order.ts';
import { ConflictError, NotFoundError } from '../../ledger/errors.ts';
import { omsProjection } from '../../projections/oms/oms-projection.ts';
import { findDecidedOrder, findOrder, listOrders, type OrderRow, type Scope } from '../../projections/oms/oms-queries.ts';
import { createOrderBody, listQuery, order, orderPage, requestableStatus, type CreateOrderBody, type OrderBody } from '../order-schemas.ts';
import { errorResponses, standardHeaders, uuid } from '../schemas.ts';
import { canonical } from '../idempotency-key.ts';

const orderParams = z.object({ orderID: uuid });

const requestHash = (body: CreateOrderBody): string =>
  createHash('sha256')
    .update(JSON.stringify(canonical(body)))
    .digest('hex');

const placeOrder = (orderId: string, body: CreateOrderBody): PlaceOrder['data'] => ({
  orderId,
  idempotencyKey: body.idempotency_key,
  requestHash: requestHash(body),
  currency: body.currency,
  customerId: body.customer_id ?? null,
  salesChannel: body.sales_channel ?? null,
  platform: body.platform ?? null,
  paymentProvider: body.payment_provider,
  paymentTransactionId: body.payment_transaction_id,
  tags: body.tags,
  discountTotal: body.discount_total,
  shippingTotal: body.shipping_total,
  taxTotal: body.tax_total,
  lines: body.line_items.map((line) => ({
    name: line.name,
    quantity: line.quantity,
    unitPrice: line.unit_price,
    variantId: line.variant_id ?? null,
    locationId: line.location_id ?? null,
    sku: line.sku ?? null,
    variantLabel: line.variant_label ?? null,
    requiresShipment: line.requires_shipment,
  })),
});

const toOrder = (row: OrderRow): OrderBody => ({
  id: row.id,
  tenant_id: row.tenant_id,
  org_id: row.org_id,
  status: row.status as OrderBody['status'],
  currency: row.currency,
  subtotal: row.subtotal,
  discount_total: row.discount_total,
  shipping_total: row.shipping_total,
  tax_total: row.tax_total,
  total: row.total,
  payment_status: row.payment_status as OrderBody['payment_status'],
  rejection: row.rejection,
  payment_provider: row.payment_provider,
  payment_transaction_id: row.payment_transaction_id,
  sales_channel: row.sales_channel,
  platform: row.platform,
  customer_id: row.customer_id,
  idempotency_key: row.idempotency_key,
  tags: row.tags,
  line_items: row.line_items.map((line) => ({
    name: line.name,
    quantity: line.quantity,
    unit_price: line.unitPrice,
    line_total: line.lineTotal,
    variant_id: line.variantId,
    location_id: line.locationId,
    sku: line.sku,
    variant_label: line.variantLabel,
    requires_shipment: line.requiresShipment,
  })),
  status_history: row.status_history.map(({ status, requested_status, outcome, reason, at }) => ({
    status: status as OrderBody['status'],
    requested_status,
    outcome: outcome as 'applied' | 'rejected',
    reason,
    at: new Date(at).toISOString(),
  })),
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/** A refused reservation is the client's 409, naming the line that could not be reserved. */
const rejectionError = (row: OrderRow): ConflictError => {
  const rejection = row.rejection ?? { reason: 'rejected', message: 'the order was rejected', line_index: null };
  const path = rejection.line_index === null ? 'body' : `body.line_items.${rejection.line_index}`;
  return new ConflictError(`order ${row.id} was not confirmed: ${rejection.message}`, [{ path, message: rejection.message }]);
};

export default async function orderRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute, dispatch, awaitOutcome } = app.ledger;
  const tags = ['orders'];
  const readOrder = async (scope: Scope, id: string) => {
    const row = await findOrder(db, scope, id);
    if (!row || row.status === 'pending') throw new NotFoundError(`order ${id} not found`);
    return row;
  };

  app.post('/orders', {
    schema: {
      tags,
      summary: 'Create an order: reserve its stock, record its payment, confirm it',
      description: 'Answers with the confirmed order, or 409 naming the line whose stock could not be reserved (nothing is reserved then).',
      headers: standardHeaders,
      body: createOrderBody,
      response: { 201: order, ...errorResponses },
    },
    handler: async (request, reply) => {
      const { tenantId, orgId } = request.principal;
      const orderId = orderIdOf(tenantId, orgId, request.body.idempotency_key);
      // Its outcome is what the answer shows: waited for alone, announced under the order's id (not the placement too).
      app.ledger.require('kafka', 'postgres');
      const { positions } = await execute(
        request,
        orderAggregate,
        { type: 'PlaceOrder', data: placeOrder(orderId, request.body) },
        undefined,
        {
          until: 'committed',
        },
      );
      const row = await awaitOutcome(omsProjection.name, () => findDecidedOrder(db, request.principal, orderId), {
        key: orderId,
        after: positions,
      });
      if (row.status === 'rejected') throw rejectionError(row);
      return reply.code(201).send(toOrder(row));
    },
  });

  app.get('/orders', {
    schema: {
      tags,
      summary: "The organization's orders, newest first",
      headers: standardHeaders,
      querystring: listQuery,
      response: { 200: orderPage, ...errorResponses },
    },
    handler: async (request) => {
      const { limit, offset } = request.query;
      const { rows, total } = await listOrders(db, request.principal, limit, offset);
      return { data: rows.map(toOrder), total, limit, offset };
    },
  });

  app.get('/orders/:orderID', {
    schema: {
      tags,
      summary: 'Read an order with its status history',
      headers: standardHeaders,
      params: orderParams,
      response: { 200: order, ...errorResponses },
    },
    handler: async (request) => toOrder(await readOrder(request.principal, request.params.orderID)),
  });

  app.post('/orders/:orderID/status', {
    schema: {
      tags,
      summary: 'Request a status change; the order state machine applies it asynchronously',
      description: 'A refused transition leaves the order unchanged and appears in its status_history with outcome "rejected".',
      headers: standardHeaders,
      params: orderParams,
      body: z.object({ status: requestableStatus }).strict(),
      response: { 202: z.object({ order_id: uuid, requested_status: requestableStatus }), ...errorResponses },
    },
    handler: async (request, reply) => {
      const orderId = (await readOrder(request.principal, request.params.orderID)).id;
      const { status } = request.body;
      await dispatch(request, orderAggregate, { type: 'RequestOrderStatus', data: { orderId, status } });
      return reply
        .code(202)
        .header('location', `${request.url.replace(/\/status$/, '')}`)
        .send({ order_id: orderId, requested_status: status });
    },
  });
}
