import { acpCredentialsOf, merchantSignature } from '../../commands/acp/acp-credentials.ts';
import { orderCreatedEvent } from '../../commands/acp/acp-order-event.ts';
import { checkoutSessionAggregate } from '../../commands/acp/checkout-session.ts';
import { ItemQueue } from '../../ledger/item-queue.ts';
import type { Worker } from '../../ledger/runtime.ts';
import { sendCommand, SYSTEM_ACTOR } from '../../ledger/send-command.ts';
import { defineWorker, type WorkerContext, type WorkerHooks } from '../../ledger/worker.ts';
import { checkoutProjection } from '../../projections/checkout/checkout-projection.ts';
import { orderNoticesOwed, type OwedOrderNotice } from '../../projections/checkout/checkout-queries.ts';
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
 * Posts each completed session's `order_create` event to its tenant's agent webhook (ACP order webhook, signed with
 * `Merchant-Signature`), retried with backoff, and records the outcome on the session, so each goes out once: after a
 * crash only events with no recorded outcome are sent again (at least once; the body names the order, so a receiver
 * can drop a repeat). The same machinery as export notices (consumers/export/export-notifier.ts).
 */
class CheckoutNotifier {
  private abort = new AbortController();

  constructor(
    private readonly context: WorkerContext,
    private readonly options: CheckoutNotifierOptions,
  ) {}

  hooks(): WorkerHooks {
    return new ItemQueue(this.context, 'checkout-notifier', this.options.noticesAtOnce, {
      queue: (limit) => orderNoticesOwed(this.context.deps.db, limit),
      keyOf: (owed: OwedOrderNotice) => owed.id,
      work: (owed) => this.work(owed),
    }).hooks({
      open: async () => {
        this.abort = new AbortController();
      },
      stopping: () => this.abort.abort(),
      close: async () => undefined,
    });
  }

  private async work(owed: OwedOrderNotice): Promise<boolean> {
    const orderId = owed.order_id as string;
    const scope = { tenantId: owed.tenant_id, orgId: owed.org_id };
    const { current } = versionsInForce(await findWebhookSecret(this.context.deps.db, scope), Date.now());
    const { webhookSecret } = acpCredentialsOf(this.options.webhookSecretKey, owed.tenant_id, owed.org_id, current);
    const body = JSON.stringify(orderCreatedEvent(this.options.publicBaseUrl, owed.id, orderId, owed.cart));
    const outcome = await sendWebhookNotice({
      url: owed.webhook_url,
      secrets: [webhookSecret],
      signedHeaders: (raw, timestamp) => ({
        'merchant-signature': merchantSignature(webhookSecret, timestamp, raw),
        'request-id': `${owed.id}/order_create`,
      }),
      body,
      id: `${owed.id}/order_create`,
      signal: this.abort.signal,
      allowPrivateNetworks: this.options.allowPrivateNetworks,
    });
    if (this.abort.signal.aborted) return false; // stopped mid-delivery: the next start sends it again
    const detail = outcome.delivered ? null : (outcome.error ?? `answered ${outcome.status}`);
    const data = { sessionId: owed.id, orderId, delivered: outcome.delivered, attempts: outcome.attempts, detail };
    await sendCommand(
      this.context.deps.bus,
      { ...scope, actor: SYSTEM_ACTOR },
      checkoutSessionAggregate,
      { type: 'RecordCheckoutOrderNotice', data },
      { correlationId: owed.id },
    );
    const log = { sessionId: owed.id, orderId, attempts: outcome.attempts, detail };
    if (outcome.delivered) this.context.log.info(log, 'order event delivered to the agent webhook');
    else this.context.log.warn(log, 'order event not delivered to the agent webhook');
    return true;
  }
}

export const checkoutNotifier = (options: CheckoutNotifierOptions): Worker =>
  defineWorker({
    name: 'checkout-notifier',
    component: 'checkout-notifier',
    source: { kind: 'queue', wokenBy: [checkoutProjection.name], idlePollMs: 5_000 },
    hooks: (context) => new CheckoutNotifier(context, options).hooks(),
  });
