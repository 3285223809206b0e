import { acpCredentialsOf, merchantSignature } from '../../commands/acp/acp-credentials.ts';
import { orderCreatedEvent, orderUpdatedEvent } from '../../commands/acp/acp-order-event.ts';
import { checkoutSessionAggregate } from '../../commands/acp/checkout-session.ts';
import { signRequest } from '../../commands/acp/ucp-message-signature.ts';
import { ucpOrderOf } from '../../commands/acp/ucp-order.ts';
import { ucpProfilePath, ucpSigningKeyOf } from '../../commands/acp/ucp-signing-key.ts';
import { ItemQueue } from '../../ledger/item-queue.ts';
import { ReadModelGate } from '../../ledger/read-model-gate.ts';
import type { Worker } from '../../ledger/runtime.ts';
import { sendCommand, SYSTEM_ACTOR } from '../../ledger/send-command.ts';
import { uuidv5 } from '../../ledger/uuid-v5.ts';
import { defineWorker, type WorkerContext, type WorkerHooks } from '../../ledger/worker.ts';
import { checkoutProjection } from '../../projections/checkout/checkout-projection.ts';
import { omsProjection } from '../../projections/oms/oms-projection.ts';
import {
  anyCompletedSession,
  orderMovesUpTo,
  orderNoticesOwed,
  orderUpdatesOwed,
  type OwedOrderNotice,
  type OwedOrderUpdate,
} from './order-notices-owed.ts';
import { findWebhookSecret, versionsInForce } from '../../projections/integrations/webhook-secrets-queries.ts';
import { sendWebhookNotice } from '../../adapters/notices/webhook-notice.ts';

export type CheckoutNotifierOptions = {
  /** The key the tenants' ACP credentials and UCP signing keys derive from (WEBHOOK_SECRET_KEY or the development key). */
  webhookSecretKey: string;
  publicBaseUrl: string;
  allowPrivateNetworks: boolean;
  noticesAtOnce: number;
};

/**
 * Posts each completed session's order event, then one for each status its order moves to, to the webhook of the
 * platform that completed it, in that protocol's shape: an ACP session's to its tenant's agent webhook (`order_create`,
 * `order_update`, signed with `Merchant-Signature`), a UCP session's to its tenant's UCP order webhook (the whole UCP
 * order each time, signed with RFC 9421 by the tenant's profile key). Retried with backoff, and the outcome recorded
 * on the session, so each goes out once: after a crash only events with no recorded outcome are sent again (at least
 * once; the body names the order and UCP's `Webhook-Id` the event, so a receiver can drop a repeat). The same
 * machinery as export notices (consumers/export/export-notifier.ts).
 */
type Owed = { kind: 'order_create'; row: OwedOrderNotice } | { kind: 'order_update'; row: OwedOrderUpdate };

/** What one event is: its body, and the headers that sign an attempt of it. */
type Delivery = { body: string; signedHeaders: (rawBody: string, timestamp: number) => Record<string, string> };

const keyOf = (owed: Owed) =>
  owed.kind === 'order_create' ? `${owed.row.id}/order_create` : `${owed.row.id}/order_update/${owed.row.status}`;

/** UCP's `Webhook-Id` is a UUID: the same for every attempt and redelivery of one event. */
const UCP_WEBHOOK_NAMESPACE = '5b7c2e90-4d1f-4a8b-9c36-e2f07a5d8b41';
const JSON_TYPE = 'application/json';

/** Without news, how often the notifier looks again. */
const IDLE_POLL_MS = 5_000;

/**
 * Only the checkout read model's progress can complete a session; the order read model's may owe a completed session's
 * platform an event, so it wakes the notifier only while some session is completed.
 */
export const sessionsChangedBy = (projection: string): boolean => projection === checkoutProjection.name;

class CheckoutNotifier {
  private abort = new AbortController();
  /** Whether any checkout session is completed: until then no order event is owed, whatever the orders do. */
  private readonly anyCompleted: ReadModelGate;

  private readonly context: WorkerContext;
  private readonly options: CheckoutNotifierOptions;

  constructor(context: WorkerContext, options: CheckoutNotifierOptions) {
    this.context = context;
    this.options = options;
    this.anyCompleted = new ReadModelGate({
      read: () => anyCompletedSession(context.deps.db),
      changedBy: sessionsChangedBy,
      pollMs: IDLE_POLL_MS,
    });
  }

  hooks(): WorkerHooks {
    return new ItemQueue(this.context, 'checkout-notifier', this.options.noticesAtOnce, {
      queue: async (limit): Promise<Owed[]> => {
        if (!(await this.anyCompleted.holds())) return [];
        return [
          ...(await orderNoticesOwed(this.context.deps.db, limit)).map((row) => ({ kind: 'order_create' as const, row })),
          ...(await orderUpdatesOwed(this.context.deps.db, limit)).map((row) => ({ kind: 'order_update' as const, row })),
        ];
      },
      keyOf,
      work: (owed) => this.work(owed),
    }).hooks({
      open: async () => {
        this.abort = new AbortController();
        this.anyCompleted.forget();
      },
      news: (projection, topic) => this.anyCompleted.news(projection, topic).wake,
      stopping: () => this.abort.abort(),
      close: async () => undefined,
    });
  }

  /** ACP's `WebhookEvent`, signed with the tenant's webhook secret. */
  private acpDelivery(owed: Owed, version: number, id: string): Delivery {
    const { row } = owed;
    const { webhookSecret } = acpCredentialsOf(this.options.webhookSecretKey, row.tenant_id, row.org_id, version);
    const { publicBaseUrl } = this.options;
    const event =
      owed.kind === 'order_create'
        ? orderCreatedEvent(publicBaseUrl, row.id, row.order_id as string, row.cart)
        : orderUpdatedEvent(publicBaseUrl, row.id, row.order_id as string, row.cart, owed.row.status);
    return {
      body: JSON.stringify(event),
      signedHeaders: (raw, timestamp) => ({ 'merchant-signature': merchantSignature(webhookSecret, timestamp, raw), 'request-id': id }),
    };
  }

  /** UCP's order as it stood after this event, with Standard Webhooks' id and time, signed as UCP's REST requests are. */
  private async ucpDelivery(owed: Owed, version: number, id: string): Promise<Delivery> {
    const { row } = owed;
    const orderId = row.order_id as string;
    const moves = owed.kind === 'order_create' ? [] : await orderMovesUpTo(this.context.deps.db, orderId, owed.row.offset);
    const { publicBaseUrl } = this.options;
    const order = ucpOrderOf({ publicBaseUrl, sessionId: row.id, orderId, cart: row.cart, moves });
    const occurred = owed.kind === 'order_create' ? owed.row.order_created_at : owed.row.at;
    const webhookId = uuidv5(id, UCP_WEBHOOK_NAMESPACE);
    const profile = new URL(ucpProfilePath(row.tenant_id, row.org_id), publicBaseUrl).toString();
    // The key the profile lists first, the one the tenant's UCP answers are signed with.
    const key = ucpSigningKeyOf(this.options.webhookSecretKey, row.tenant_id, row.org_id, version);
    const fields: [string, string][] = [
      ['ucp-agent', `profile="${profile}"`],
      // UCP signs an idempotency key on every POST; the event's id serves.
      ['idempotency-key', webhookId],
      ['webhook-id', webhookId],
      ['webhook-timestamp', String(Math.floor(new Date(occurred).getTime() / 1000))],
    ];
    const url = row.webhook_url;
    return {
      body: JSON.stringify(order),
      signedHeaders: (raw, timestamp) => ({
        'content-type': JSON_TYPE,
        ...Object.fromEntries(fields),
        ...signRequest(key, { method: 'POST', url, headers: fields, body: raw, contentType: JSON_TYPE }, timestamp),
      }),
    };
  }

  private async work(owed: Owed): Promise<boolean> {
    const { row } = owed;
    const orderId = row.order_id as string;
    const scope = { tenantId: row.tenant_id, orgId: row.org_id };
    const { current } = versionsInForce(await findWebhookSecret(this.context.deps.db, scope), Date.now());
    const id = keyOf(owed);
    const delivery = row.platform === 'ucp' ? await this.ucpDelivery(owed, current, id) : this.acpDelivery(owed, current, id);
    const outcome = await sendWebhookNotice({
      url: row.webhook_url,
      signedHeaders: delivery.signedHeaders,
      body: delivery.body,
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
    const status = owed.kind === 'order_create' ? 'confirmed' : owed.row.status;
    const log = { sessionId: row.id, orderId, platform: row.platform, event: owed.kind, status, attempts: outcome.attempts, detail };
    if (outcome.delivered) this.context.log.info(log, 'order event delivered to the platform webhook');
    else this.context.log.warn(log, 'order event not delivered to the platform webhook');
    return true;
  }
}

export const checkoutNotifier = (options: CheckoutNotifierOptions): Worker =>
  defineWorker({
    name: 'checkout-notifier',
    component: 'checkout-notifier',
    source: { kind: 'queue', wokenBy: [checkoutProjection.name, omsProjection.name], idlePollMs: IDLE_POLL_MS },
    hooks: (context) => new CheckoutNotifier(context, options).hooks(),
  });
