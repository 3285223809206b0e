import { inboundDeadLetterAggregate, type InboundDeadLetterEvent } from '../../commands/integrations/inbound-dead-letter.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { projectionOf, type EventHandlers, type Projection } from '../../ledger/projection.ts';
import { inboundMigrations } from './inbound-migrations.ts';

const at = (event: RecordedEvent) => new Date(event.envelope.occurredAt);

const handlers: EventHandlers<InboundDeadLetterEvent> = {
  InboundEventDeadLettered: (event, { table, db, schema }) => {
    const { inboundDeadLetterId, connectionId, inboxId, deliveryId, reason, externalId } = event.data;
    return table('dead_letters')
      .insert({
        id: inboundDeadLetterId,
        tenant_id: event.envelope.tenantId,
        org_id: event.envelope.orgId,
        connection_id: connectionId,
        inbox_id: inboxId,
        delivery_id: deliveryId,
        event: event.data.event,
        external_id: externalId,
        reason,
        status: 'DEAD_LETTERED',
        dead_lettered_at: at(event),
        redriven_at: null,
      })
      .onConflict('id')
      .merge({
        reason,
        status: 'DEAD_LETTERED',
        dead_lettered_at: at(event),
        times_dead_lettered: db.raw('??.times_dead_lettered + 1', [`${schema}.dead_letters`]),
      });
  },
  InboundEventRedriven: (event, { table }) =>
    table('dead_letters')
      .where({ id: event.data.inboundDeadLetterId })
      .update({ status: 'REDRIVEN', redriven_at: at(event) }),
};

/** The inbound deliveries the order mapping gave up on, per connection, as the connection's inbound endpoint and the DLQ CLI list them. */
export const inboundProjection: Projection = projectionOf({
  name: 'inbound',
  topics: [inboundDeadLetterAggregate.events],
  migrations: inboundMigrations,
  handlers,
});
