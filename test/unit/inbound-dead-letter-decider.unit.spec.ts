import { describe, expect, it } from 'vitest';
import {
  inboundDeadLetterAggregate,
  inboundDeadLetterDecider,
  inboundDeadLetterIdOf,
  type InboundDeadLetterCommand,
  type InboundDeadLetterEvent,
} from '../../commands/integrations/inbound-dead-letter.ts';
import { NotFoundError } from '../../ledger/errors.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(inboundDeadLetterDecider);

const delivery = {
  inboxId: 'inbox-1',
  deliveryId: 'd1',
  connectionId: 'c1',
  unifiedConnectionId: 'u1',
  event: 'accounting.order.created',
  externalId: 'ord-1',
  payload: '{"id":"ord-1","currency":"XYZ"}',
};
const inboundDeadLetterId = inboundDeadLetterIdOf('inbox-1', 'd1');
const deadLettered: InboundDeadLetterEvent = {
  type: 'InboundEventDeadLettered',
  data: { inboundDeadLetterId, ...delivery, reason: 'bad currency' },
};
const redriven: InboundDeadLetterEvent = { type: 'InboundEventRedriven', data: { inboundDeadLetterId, ...delivery } };
const file: WithoutMetadata<InboundDeadLetterCommand> = { type: 'DeadLetterInboundEvent', data: deadLettered.data };
const redrive: WithoutMetadata<InboundDeadLetterCommand> = { type: 'RedriveInboundEvent', data: { inboundDeadLetterId } };

describe('inboundDeadLetterIdOf', () => {
  it('is one UUID per inbox and delivery', () => {
    expect(inboundDeadLetterId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-/);
    expect(inboundDeadLetterIdOf('inbox-1', 'd1')).toBe(inboundDeadLetterId);
    expect(inboundDeadLetterIdOf('inbox-1', 'd2')).not.toBe(inboundDeadLetterId);
    expect(inboundDeadLetterIdOf('inbox-2', 'd1')).not.toBe(inboundDeadLetterId);
  });

  it('names the aggregate from the command', () => {
    expect(inboundDeadLetterAggregate.aggregateIdOf(redrive)).toBe(inboundDeadLetterId);
    expect(inboundDeadLetterAggregate.events.name).toBe('integrations.inbound-dead-letter.events.v1');
  });
});

describe('inbound dead-letter decider', () => {
  it('files a delivery once, however often the mapping reports it', () => {
    given().when(file).then([deadLettered]);
    given([deadLettered]).when(file).thenNothingHappened();
  });

  it('re-drives a filed delivery with the delivery itself, once', () => {
    given([deadLettered]).when(redrive).then([redriven]);
    given([deadLettered, redriven]).when(redrive).thenNothingHappened();
  });

  it('files a re-driven delivery that fails again, and re-drives it again', () => {
    const { events } = given([deadLettered, redriven]).whenInTurn([file, redrive]);
    expect(events).toEqual([[deadLettered], [redriven]]);
  });

  it('refuses to re-drive what was never filed', () => {
    given().when(redrive).thenThrows(NotFoundError);
  });
});
