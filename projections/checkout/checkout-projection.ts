import { agentCheckoutAggregate, type AgentCheckoutEvent } from '../../commands/acp/agent-checkout.ts';
import { checkoutSessionAggregate, type CheckoutSessionEvent } from '../../commands/acp/checkout-session.ts';
import { withStock, type Cart } from '../../commands/acp/checkout-cart.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { projectionOf, type EventHandlers, type Projection } from '../../ledger/projection.ts';
import { checkoutMigrations } from './checkout-migrations.ts';

const at = (event: RecordedEvent) => new Date(event.envelope.occurredAt);

const cartOf = ({ currency, lines, shippingOptions, selectedOptionId, fulfillmentDetails, buyer }: Cart) =>
  JSON.stringify({ currency, lines, shippingOptions, selectedOptionId, fulfillmentDetails, buyer });

const handlers: EventHandlers<CheckoutSessionEvent | AgentCheckoutEvent> = {
  CheckoutSessionOpened: (event, { table }) => {
    const d = event.data;
    const row = {
      id: d.sessionId,
      tenant_id: event.envelope.tenantId,
      org_id: event.envelope.orgId,
      status: d.status,
      currency: d.currency,
      cart: cartOf(d),
      subtotal: d.subtotal,
      shipping_total: d.shippingTotal,
      total: d.total,
      attempt: 0,
      created_at: at(event),
      updated_at: at(event),
    };
    return table('checkout_sessions').insert(row).onConflict('id').ignore();
  },
  CheckoutSessionRevised: (event, { table }) => {
    const d = event.data;
    return table('checkout_sessions')
      .where({ id: d.sessionId })
      .update({
        status: d.status,
        cart: cartOf(d),
        subtotal: d.subtotal,
        shipping_total: d.shippingTotal,
        total: d.total,
        updated_at: at(event),
      });
  },
  CheckoutCompletionStarted: (event, { table, db }) =>
    table('checkout_sessions')
      .where({ id: event.data.sessionId })
      .update({
        status: 'complete_in_progress',
        order_id: event.data.orderId,
        attempt: event.data.attempt,
        reservation: event.data.reservation ?? null,
        updated_at: at(event),
        // The buyer sent with the completion replaces the session's (the cart keeps it as JSON text, as the events do).
        ...(event.data.buyer ? { cart: db.raw(`jsonb_set(cart, '{buyer}', to_jsonb(?::text))`, [event.data.buyer]) } : {}),
      }),
  CheckoutSessionCompleted: (event, { table }) =>
    table('checkout_sessions')
      .where({ id: event.data.sessionId })
      .update({ status: 'completed', order_id: event.data.orderId, updated_at: at(event) }),
  CheckoutCompletionFailed: async (event, { table, db }) => {
    const { sessionId, orderId, reason, message, stock, status } = event.data;
    const row = (await table('checkout_sessions').where({ id: sessionId }).first('cart')) as { cart: Cart } | undefined;
    if (!row) return;
    await table('checkout_sessions')
      .where({ id: sessionId })
      .update({
        status,
        cart: cartOf(withStock(row.cart, stock)),
        order_id: null,
        attempt: db.raw('attempt + 1'),
        last_failure: JSON.stringify({ order_id: orderId, reason, message }),
        updated_at: at(event),
      });
  },
  CheckoutSessionCanceled: (event, { table }) =>
    table('checkout_sessions')
      .where({ id: event.data.sessionId })
      .update({ status: 'canceled', updated_at: at(event) }),
  CheckoutOrderNoticeRecorded: (event, { table }) => {
    const { sessionId, delivered, attempts, detail } = event.data;
    return table('checkout_sessions')
      .where({ id: sessionId })
      .update({ notice: JSON.stringify({ delivered, attempts, detail, at: at(event).toISOString() }) });
  },
  CheckoutOrderUpdateNoticeRecorded: (event, { table }) => {
    const { sessionId, status, delivered, attempts, detail } = event.data;
    const row = { session_id: sessionId, status, delivered, attempts, detail, recorded_at: at(event) };
    return table('order_update_notices').insert(row).onConflict(['session_id', 'status']).ignore();
  },
  AgentCheckoutConfigured: (event, { table }) => {
    const row = {
      tenant_id: event.envelope.tenantId,
      org_id: event.envelope.orgId,
      webhook_url: event.data.webhookUrl,
      ucp_order_webhook_url: event.data.ucpOrderWebhookUrl ?? null,
      updated_at: at(event),
    };
    return table('agent_checkouts').insert(row).onConflict(['tenant_id', 'org_id']).merge();
  },
  // The session is unchanged; the refusal stays in the log.
  CheckoutSessionChangeRefused: async () => undefined,
};

/** Agents' checkout sessions as the ACP routes answer them, their order notices, and each tenant's agent webhook. */
export const checkoutProjection: Projection = projectionOf({
  name: 'checkout',
  topics: [checkoutSessionAggregate.events, agentCheckoutAggregate.events],
  migrations: checkoutMigrations,
  handlers,
});
