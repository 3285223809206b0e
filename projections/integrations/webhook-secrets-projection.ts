import { webhookSecretAggregate, type WebhookSecretEvent } from '../../commands/integrations/webhook-secret.ts';
import { projectionOf, type EventHandlers, type Projection } from '../../ledger/projection.ts';
import { webhookSecretsMigrations } from './webhook-secrets-migrations.ts';

const handlers: EventHandlers<WebhookSecretEvent> = {
  WebhookSecretRotated: (event, { table }) => {
    const { webhookSecretId, version, previousVersion, previousValidUntil } = event.data;
    return table('webhook_secrets')
      .insert({
        id: webhookSecretId,
        tenant_id: event.envelope.tenantId,
        org_id: event.envelope.orgId,
        version,
        previous_version: previousVersion,
        previous_valid_until: new Date(previousValidUntil),
        rotated_at: new Date(event.envelope.occurredAt),
      })
      .onConflict('id')
      .merge(['version', 'previous_version', 'previous_valid_until', 'rotated_at']);
  },
};

/** Each tenant and org's current webhook secret version (absent: version 0, never rotated), as the receiver reads it. */
export const webhookSecretsProjection: Projection = projectionOf({
  name: 'webhook-secrets',
  topics: [webhookSecretAggregate.events],
  migrations: webhookSecretsMigrations,
  handlers,
});
