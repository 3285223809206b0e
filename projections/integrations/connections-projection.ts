import { connectionAggregate, type ConnectionEvent } from '../../commands/integrations/connection.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { projectionOf, type EventHandlers, type Projection } from '../../ledger/projection.ts';
import { connectionsMigrations } from './connections-migrations.ts';

const at = (event: RecordedEvent) => new Date(event.envelope.occurredAt);

const handlers: EventHandlers<ConnectionEvent> = {
  // A reactivation keeps the row, its owner and its created_at: it is the same connection again.
  ConnectionSaved: (event, { table }) => {
    const { connectionId, unifiedConnectionId, provider, category } = event.data;
    return table('connections')
      .insert({
        id: connectionId,
        tenant_id: event.envelope.tenantId,
        org_id: event.envelope.orgId,
        unified_connection_id: unifiedConnectionId,
        provider,
        category,
        status: 'ACTIVE',
        status_reason: null,
        created_at: at(event),
        updated_at: at(event),
      })
      .onConflict('id')
      .merge(['provider', 'category', 'status', 'status_reason', 'updated_at']);
  },
  ConnectionDisconnected: (event, { table }) =>
    table('connections')
      .where({ id: event.data.connectionId })
      .update({ status: 'DISCONNECTED', status_reason: null, updated_at: at(event) }),
  ConnectionAuthFailed: (event, { table }) =>
    table('connections')
      .where({ id: event.data.connectionId })
      .update({ status: 'AUTH_FAILED', status_reason: event.data.reason, updated_at: at(event) }),
  // Background bookkeeping, not a change the user made: updated_at stays.
  ConnectionWebhookSubscribed: (event, { table }) =>
    table('connections')
      .where({ id: event.data.connectionId })
      .update({ webhook_subscription_id: event.data.subscriptionId, webhook_problem: null }),
  ConnectionWebhookRefused: (event, { table }) => {
    const { objectType, event: kind, reason } = event.data;
    return table('connections')
      .where({ id: event.data.connectionId })
      .update({ webhook_problem: `the provider refused the ${objectType} ${kind} subscription: ${reason}` });
  },
  ConnectionDefaultLocationSet: (event, { table }) =>
    table('connections')
      .where({ id: event.data.connectionId })
      .update({ default_location_id: event.data.locationId, updated_at: at(event) }),
};

/** Connections and their status, as the integrations endpoints and the webhook receiver read them. */
export const connectionsProjection: Projection = projectionOf({
  name: 'connections',
  topics: [connectionAggregate.events],
  migrations: connectionsMigrations,
  handlers,
});
