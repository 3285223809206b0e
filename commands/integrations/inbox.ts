import { uuidv5 } from '../../ledger/uuid-v5.ts';
import { defineAggregate } from '../../ledger/aggregate.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';

/**
 * The inbox of platform webhooks: every genuine delivery, appended once. Keyed by the external object the event is
 * about (the connection and `data.id`), so one external order's events stay in order on one partition; a delivery
 * without an id is its own key. The decider remembers the deliveries it has taken, so a redelivery (the same body)
 * decides nothing: dedupe at the door without a read-model lookup that could race.
 */
const INBOX_NAMESPACE = '6d1e8f2a-4b7c-4e9d-a3f5-8c2b0e7d1a64';

/** `deliveryId`: SHA-256 (hex) of the raw request body, which names the connection, the event and its data. */
export const inboxIdOf = (connectionId: string, externalId: string | null, deliveryId: string): string =>
  uuidv5(externalId === null ? `${connectionId}/delivery/${deliveryId}` : `${connectionId}/object/${externalId}`, INBOX_NAMESPACE);

/** Deliveries remembered per external object: far more than a platform redelivers, bounded so the state stays small. */
export const REMEMBERED_DELIVERIES = 500;

// ── Events ──────────────────────────────────────────────────────────────────
export type WebhookReceived = Event<
  'WebhookReceived',
  {
    inboxId: string;
    deliveryId: string;
    /** Our connection id (tenant and org are the envelope's: the connection's owner). */
    connectionId: string;
    unifiedConnectionId: string;
    /** The platform's event kind as given, e.g. `accounting.order.created`. */
    event: string;
    /** `data.id` when the platform gave one (as text). */
    externalId: string | null;
    /** The envelope's `data` object, as JSON text. */
    payload: string;
  }
>;
export type InboxEvent = WebhookReceived;

// ── State ───────────────────────────────────────────────────────────────────
export type Inbox = { deliveries: string[] };

export const initialState = (): Inbox => ({ deliveries: [] });

export const evolve = (state: Inbox, event: InboxEvent): Inbox => {
  switch (event.type) {
    case 'WebhookReceived':
      return { deliveries: [...state.deliveries, event.data.deliveryId].slice(-REMEMBERED_DELIVERIES) };
    default: {
      const exhaustive: never = event.type;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
export type ReceiveWebhook = Command<'ReceiveWebhook', WebhookReceived['data']>;
export type InboxCommand = ReceiveWebhook;

export const decide = (command: InboxCommand, state: Inbox): InboxEvent[] => {
  switch (command.type) {
    case 'ReceiveWebhook':
      return state.deliveries.includes(command.data.deliveryId) ? [] : [{ type: 'WebhookReceived', data: command.data }];
    default: {
      const exhaustive: never = command.type;
      throw new Error(`unknown command ${String(exhaustive)}`);
    }
  }
};

export const inboxDecider: Decider<InboxCommand, InboxEvent, Inbox> = { initialState, evolve, decide };

export const inboxAggregate = defineAggregate({
  name: 'inbox',
  stream: 'integrations.inbox',
  decider: inboxDecider,
  id: 'inboxId',
  events: { namespace: 'commerce.ledger.integrations', types: ['WebhookReceived'] },
});

/** The event kinds mapped into orders (the spec's, and the shorter spellings it also shows); others are stored only. */
export const ORDER_CREATED_EVENTS = ['accounting.order.created', 'order.created'];
export const ORDER_UPDATED_EVENTS = ['accounting.order.updated', 'order.updated'];
