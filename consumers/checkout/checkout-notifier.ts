import { acpCredentialsOf, merchantSignature } from '../../commands/acp/acp-credentials.ts';
import { orderCreatedEvent, orderUpdatedEvent } from '../../commands/acp/acp-order-event.ts';
import { checkoutSessionAggregate } from '../../commands/acp/checkout-session.ts';
import { ItemQueue } from '../../ledger/item-queue.ts';
import type { Worker } from '../../ledger/runtime.ts';
import { sendCommand, SYSTEM_ACTOR } from '../../ledger/send-command.ts';
import { defineWorker, type WorkerContext, type WorkerHooks } from '../../ledger/worker.ts';
import { checkoutProjection } from '../../projections/checkout/checkout-projection.ts';
import { omsProjection } from '../../projections/oms/oms-projection.ts';
import { orderNoticesOwed, type OwedOrderNotice } from '../../projections/checkout/checkout-queries.ts';
import { orderUpdatesOwed, type OwedOrderUpdate } from './order-updates-owed.ts';
import { findWebhookSecret, versionsInForce } from '../../projections/integrations/webhook-secrets-queries.ts';
import { sendWebhookNotice } from '../../adapters/notices/webhook-notice.ts';

export type CheckoutNotifierOptions = {
  /** The key the tenants' ACP credentials derive from (WEBHOOK_SECRET_KEY or the development key). */
  webhookSecretKey: string;
  publicBaseUrl: string;
  allowPrivateNetworks: boolean;
  noticesAtOnce: number;
};

/**
 * Posts each completed session's `order_create` event, then an `order_update` for each status its order moves to, to its tenant's agent webhook (ACP order webhook, signed with
 * `Merchant-Signature`), retried with backoff, and records the outcome on the session, so each goes out once: after a
 * crash only events with no recorded outcome are sent again (at least once; the body names the order, so a receiver
 * can drop a repeat). The same machinery as export notices (consumers/export/export-notifier.ts).
 */
type Owed = { kind: 'order_create'; row: OwedOrderNotice } | { kind: 'order_update'; row: OwedOrderUpdate };

class CheckoutNotifier {
  private abort = new AbortController();

  constructor(
    private readonly context: WorkerContext,
    private readonly options: CheckoutNotifierOptions,
  ) {}

  hooks(): WorkerHooks {
    return new ItemQueue(this.context, 'checkout-notifier', this.options.noticesAtOnce, {
      queue: async (limit): Promise<Owed[]> => [
        ...(await orderNoticesOwed(this.context.deps.db, limit)).map((row) => ({ kind: 'order_create' as const, row })),
        ...(await orderUpdatesOwed(this.context.deps.db, limit)).map((row) => ({ kind: 'order_update' as const, row })),
      ],
      keyOf: (owed: Owed) =>
        owed.kind === 'order_create' ? `${owed.row.id}/order_create` : `${owed.row.id}/order_update/${owed.row.status}`,
      work: (owed) => this.work(owed),
    }).hooks({
      open: async () => {
        this.abort = new AbortController();
      },
      stopping: () => this.abort.abort(),
      close: async () => undefined,
    });
  }

  private async work(owed: Owed): Promise<boolean> {
    const { row } = owed;
    const orderId = row.order_id as string;
    const scope = { tenantId: row.tenant_id, orgId: row.org_id };
    const { current } = versionsInForce(await findWebhookSecret(this.context.deps.db, scope), Date.now());
    const { webhookSecret } = acpCredentialsOf(this.options.webhookSecretKey, row.tenant_id, row.org_id, current);
    const { publicBaseUrl } = this.options;
    const event =
      owed.kind === 'order_create'
        ? orderCreatedEvent(publicBaseUrl, row.id, orderId, row.cart)
        : orderUpdatedEvent(publicBaseUrl, row.id, orderId, row.cart, owed.row.status);
    const id = owed.kind === 'order_create' ? `${row.id}/order_create` : `${row.id}/order_update/${owed.row.status}`;
    const body = JSON.stringify(event);
    const outcome = await sendWebhookNotice({
      url: row.webhook_url,
      secrets: [webhookSecret],
      signedHeaders: (raw, timestamp) => ({ 'merchant-signature': merchantSignature(webhookSecret, timestamp, raw), 'request-id': id }),
      body,
      id,
      signal: this.abort.signal,
      allowPrivateNetworks: this.options.allowPrivateNetworks,
    });
    if (this.abort.signal.aborted) return false; // stopped mid-delivery: the next start sends it again
    const detail = outcome.delivered ? null : (outcome.error ?? `answered ${outcome.status}`);
    const recorded = { sessionId: row.id, orderId, delivered: outcome.delivered, attempts: outcome.attempts, detail };
    const owner = { ...scope, actor: SYSTEM_ACTOR };
    const options = { correlationId: row.id };
    if (owed.kind === 'order_create')
      await sendCommand(
        this.context.deps.bus,
        owner,
        checkoutSessionAggregate,
        { type: 'RecordCheckoutOrderNotice', data: recorded },
        options,
      );
    else {
      const data = { ...recorded, status: owed.row.status };
      await sendCommand(this.context.deps.bus, owner, checkoutSessionAggregate, { type: 'RecordCheckoutOrderUpdateNotice', data }, options);
    }
    const log = { sessionId: row.id, orderId, event: event.type, status: event.data.status, attempts: outcome.attempts, detail };
    if (outcome.delivered) this.context.log.info(log, 'order event delivered to the agent webhook');
    else this.context.log.warn(log, 'order event not delivered to the agent webhook');
    return true;
  }
}

export const checkoutNotifier = (options: CheckoutNotifierOptions): Worker =>
  defineWorker({
    name: 'checkout-notifier',
    component: 'checkout-notifier',
    source: { kind: 'queue', wokenBy: [checkoutProjection.name, omsProjection.name], idlePollMs: 5_000 },
    hooks: (context) => new CheckoutNotifier(context, options).hooks(),
  });
