import { v5 as uuidv5, validate as isUuid } from 'uuid';
import { defineAggregate } from '../../ledger/aggregate.ts';
import { NotFoundError, ValidationError } from '../../ledger/errors.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';

/**
 * A tenant's connection to a commerce or accounting platform through the connection provider. Lifecycle:
 * (none) → ACTIVE on save; ACTIVE → AUTH_FAILED when the provider reports it revoked; ACTIVE | AUTH_FAILED →
 * DISCONNECTED on disconnect; DISCONNECTED | AUTH_FAILED → ACTIVE when saved again.
 *
 * Ownership: the first save's tenant and org own the aggregate for good. The ledger's single writer refuses every
 * command of another tenant or org as not found before this decider sees it (ledger/aggregate-writer.ts), so the
 * decider only ever decides for the owner; the edge answers another organization's save of the same provider
 * connection with 409 (http/routes/integrations.ts).
 */
const CONNECTION_NAMESPACE = '3f6b1d2e-8c4a-4b7e-9a51-0d2c7e9f4a18';
/** Global, not per tenant: one provider connection has exactly one aggregate, so one single writer and one owner. */
export const connectionIdOf = (unifiedConnectionId: string): string => uuidv5(unifiedConnectionId, CONNECTION_NAMESPACE);

export type ConnectionStatus = 'ACTIVE' | 'DISCONNECTED' | 'AUTH_FAILED';
export type ConnectionCategory = 'commerce' | 'accounting';

// ── Events ──────────────────────────────────────────────────────────────────
/** `category`: `commerce` or `accounting`. */
export type ConnectionSaved = Event<
  'ConnectionSaved',
  { connectionId: string; unifiedConnectionId: string; provider: string; category: string }
>;
export type ConnectionDisconnected = Event<'ConnectionDisconnected', { connectionId: string }>;
export type ConnectionAuthFailed = Event<'ConnectionAuthFailed', { connectionId: string; reason: string }>;
export type ConnectionWebhookSubscribed = Event<
  'ConnectionWebhookSubscribed',
  { connectionId: string; subscriptionId: string; objectType: string; event: string }
>;

/** The provider refused a subscription the connection needs (a 4xx other than auth): shown on the connection, retried. */
export type ConnectionWebhookRefused = Event<
  'ConnectionWebhookRefused',
  { connectionId: string; objectType: string; event: string; reason: string; httpStatus: number | null }
>;

/** `locationId`: the stock location mapped orders of this connection reserve at; null for none. */
export type ConnectionDefaultLocationSet = Event<'ConnectionDefaultLocationSet', { connectionId: string; locationId: string | null }>;

export type ConnectionEvent =
  | ConnectionSaved
  | ConnectionDisconnected
  | ConnectionAuthFailed
  | ConnectionWebhookSubscribed
  | ConnectionWebhookRefused
  | ConnectionDefaultLocationSet;

// ── State ───────────────────────────────────────────────────────────────────
/** `defaultLocationId`: absent in states restored from before it existed, which means none. */
export type Connection =
  | { status: 'Empty' }
  | {
      status: 'Saved';
      connectionStatus: ConnectionStatus;
      unifiedConnectionId: string;
      subscriptionIds: string[];
      defaultLocationId?: string | null;
      /** The last refusal of a subscription, until one succeeds (absent in states from before it existed). */
      webhookRefusal?: string | null;
    };

export const initialState = (): Connection => ({ status: 'Empty' });

const withStatus = (state: Connection, connectionStatus: ConnectionStatus): Connection =>
  state.status === 'Saved' ? { ...state, connectionStatus } : state;

export const evolve = (state: Connection, event: ConnectionEvent): Connection => {
  switch (event.type) {
    case 'ConnectionSaved':
      return {
        status: 'Saved',
        connectionStatus: 'ACTIVE',
        unifiedConnectionId: event.data.unifiedConnectionId,
        subscriptionIds: state.status === 'Saved' ? state.subscriptionIds : [],
        defaultLocationId: state.status === 'Saved' ? (state.defaultLocationId ?? null) : null,
      };
    case 'ConnectionDisconnected':
      return withStatus(state, 'DISCONNECTED');
    case 'ConnectionAuthFailed':
      return withStatus(state, 'AUTH_FAILED');
    case 'ConnectionWebhookSubscribed':
      return state.status === 'Saved'
        ? { ...state, subscriptionIds: [...state.subscriptionIds, event.data.subscriptionId], webhookRefusal: null }
        : state;
    case 'ConnectionWebhookRefused':
      return state.status === 'Saved' ? { ...state, webhookRefusal: refusalOf(event.data) } : state;
    case 'ConnectionDefaultLocationSet':
      return state.status === 'Saved' ? { ...state, defaultLocationId: event.data.locationId } : state;
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

const refusalOf = ({ objectType, event, reason }: ConnectionWebhookRefused['data']): string => `${objectType}:${event}: ${reason}`;

// ── Commands ────────────────────────────────────────────────────────────────
export type SaveConnection = Command<'SaveConnection', ConnectionSaved['data']>;
export type DisconnectConnection = Command<'DisconnectConnection', { connectionId: string }>;
export type MarkConnectionAuthFailed = Command<'MarkConnectionAuthFailed', { connectionId: string; reason: string }>;
export type RecordWebhookSubscription = Command<
  'RecordWebhookSubscription',
  { connectionId: string; subscriptionId: string; objectType: string; event: string }
>;

export type RecordWebhookRefused = Command<'RecordWebhookRefused', ConnectionWebhookRefused['data']>;

/** The tenant's choice of fulfilment location for the connection's mapped orders (the edge checks the location exists). */
export type SetConnectionDefaultLocation = Command<'SetConnectionDefaultLocation', ConnectionDefaultLocationSet['data']>;

export type ConnectionCommand =
  | SaveConnection
  | DisconnectConnection
  | MarkConnectionAuthFailed
  | RecordWebhookSubscription
  | RecordWebhookRefused
  | SetConnectionDefaultLocation;

// ── Decide ──────────────────────────────────────────────────────────────────
const saved = (state: Connection, connectionId: string): Extract<Connection, { status: 'Saved' }> => {
  if (state.status !== 'Saved') throw new NotFoundError(`connection ${connectionId} not found`);
  return state;
};

/** Saving an ACTIVE connection again changes nothing (the same record); a disconnected or failed one comes back. */
const save = ({ data }: SaveConnection, state: Connection): ConnectionEvent[] =>
  state.status === 'Saved' && state.connectionStatus === 'ACTIVE' ? [] : [{ type: 'ConnectionSaved', data }];

const disconnect = ({ data }: DisconnectConnection, state: Connection): ConnectionEvent[] =>
  saved(state, data.connectionId).connectionStatus === 'DISCONNECTED' ? [] : [{ type: 'ConnectionDisconnected', data }];

/** Only a usable connection can fail: a disconnected one was let go on purpose, and a failed one has failed already. */
const markAuthFailed = ({ data }: MarkConnectionAuthFailed, state: Connection): ConnectionEvent[] =>
  saved(state, data.connectionId).connectionStatus === 'ACTIVE' ? [{ type: 'ConnectionAuthFailed', data }] : [];

/** A subscription is recorded once, whatever the connection's status: it exists at the provider either way. */
const recordSubscription = ({ data }: RecordWebhookSubscription, state: Connection): ConnectionEvent[] =>
  saved(state, data.connectionId).subscriptionIds.includes(data.subscriptionId) ? [] : [{ type: 'ConnectionWebhookSubscribed', data }];

/** A refusal is recorded when it says something new: the worker's retries of the same refusal record nothing. */
const recordRefusal = ({ data }: RecordWebhookRefused, state: Connection): ConnectionEvent[] =>
  (saved(state, data.connectionId).webhookRefusal ?? null) === refusalOf(data) ? [] : [{ type: 'ConnectionWebhookRefused', data }];

/** Settable in any status (a disconnected connection keeps its settings for when it comes back); the same value again changes nothing. */
const setDefaultLocation = ({ data }: SetConnectionDefaultLocation, state: Connection): ConnectionEvent[] => {
  const current = saved(state, data.connectionId).defaultLocationId ?? null;
  // The read model keeps it as a uuid: nothing else may be accepted.
  if (data.locationId !== null && !isUuid(data.locationId))
    throw new ValidationError('the location id must be a UUID', [{ path: 'body.location_id', message: 'must be a UUID' }]);
  return current === data.locationId ? [] : [{ type: 'ConnectionDefaultLocationSet', data }];
};

export const decide = (command: ConnectionCommand, state: Connection): ConnectionEvent[] => {
  switch (command.type) {
    case 'SaveConnection':
      return save(command, state);
    case 'DisconnectConnection':
      return disconnect(command, state);
    case 'MarkConnectionAuthFailed':
      return markAuthFailed(command, state);
    case 'RecordWebhookSubscription':
      return recordSubscription(command, state);
    case 'RecordWebhookRefused':
      return recordRefusal(command, state);
    case 'SetConnectionDefaultLocation':
      return setDefaultLocation(command, state);
    default: {
      const exhaustive: never = command;
      throw new Error(`unknown command ${JSON.stringify(exhaustive)}`);
    }
  }
};

export const connectionDecider: Decider<ConnectionCommand, ConnectionEvent, Connection> = { initialState, evolve, decide };

/** One provider connection, keyed by `connectionIdOf` its provider id. */
export const connectionAggregate = defineAggregate({
  name: 'connection',
  stream: 'integrations.connection',
  decider: connectionDecider,
  id: 'connectionId',
  events: {
    namespace: 'commerce.ledger.integrations',
    types: [
      'ConnectionSaved',
      'ConnectionDisconnected',
      'ConnectionAuthFailed',
      'ConnectionWebhookSubscribed',
      'ConnectionWebhookRefused',
      'ConnectionDefaultLocationSet',
    ],
  },
});
