import { uuidv5 } from '../../ledger/uuid-v5.ts';
import { defineAggregate } from '../../ledger/aggregate.ts';
import { NotFoundError } from '../../ledger/errors.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';
import type { WebhookReceived } from './inbox.ts';

/**
 * The dead-letter topic of inbound webhooks: a delivery the order mapping can never map (malformed `data`, an unknown
 * currency, an order the order rules refuse) is filed here with its reason and the delivery itself, so that the
 * mapping can move on to the events behind it. Re-driving it hands the stored delivery back to the mapping
 * (`InboundEventRedriven` carries the payload), which maps it again; one that fails again is filed again.
 */
const INBOUND_DEAD_LETTER_NAMESPACE = '9b3c5e71-2d8f-4a06-b4e2-7f1a6c9d3e58';
/** One dead letter per delivery into an inbox (the inbox id names the external object, the delivery id the body). */
export const inboundDeadLetterIdOf = (inboxId: string, deliveryId: string): string =>
  uuidv5(`${inboxId}/${deliveryId}`, INBOUND_DEAD_LETTER_NAMESPACE);

/** The delivery as the inbox recorded it (`WebhookReceived`), which a re-drive hands back unchanged. */
export type InboundDelivery = WebhookReceived['data'];

// ── Events ──────────────────────────────────────────────────────────────────
export type InboundEventDeadLettered = Event<'InboundEventDeadLettered', { inboundDeadLetterId: string; reason: string } & InboundDelivery>;
export type InboundEventRedriven = Event<'InboundEventRedriven', { inboundDeadLetterId: string } & InboundDelivery>;
export type InboundDeadLetterEvent = InboundEventDeadLettered | InboundEventRedriven;

// ── State ───────────────────────────────────────────────────────────────────
export type InboundDeadLetter = { status: 'Empty' } | { status: 'Filed' | 'Redriven'; delivery: InboundDelivery };

export const initialState = (): InboundDeadLetter => ({ status: 'Empty' });

const deliveryOf = ({
  inboxId,
  deliveryId,
  connectionId,
  unifiedConnectionId,
  event,
  externalId,
  payload,
}: InboundDelivery): InboundDelivery => ({
  inboxId,
  deliveryId,
  connectionId,
  unifiedConnectionId,
  event,
  externalId,
  payload,
});

export const evolve = (state: InboundDeadLetter, event: InboundDeadLetterEvent): InboundDeadLetter => {
  switch (event.type) {
    case 'InboundEventDeadLettered':
      return { status: 'Filed', delivery: deliveryOf(event.data) };
    case 'InboundEventRedriven':
      return state.status === 'Empty' ? state : { ...state, status: 'Redriven' };
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
export type DeadLetterInboundEvent = Command<'DeadLetterInboundEvent', InboundEventDeadLettered['data']>;
/** The operator's re-drive (the DLQ CLI): the stored delivery goes back to the order mapping. */
export type RedriveInboundEvent = Command<'RedriveInboundEvent', { inboundDeadLetterId: string }>;
export type InboundDeadLetterCommand = DeadLetterInboundEvent | RedriveInboundEvent;

// ── Decide ──────────────────────────────────────────────────────────────────
/** Filing is idempotent while filed (a redelivered failure files nothing new); after a re-drive a new failure files again. */
export const decide = (command: InboundDeadLetterCommand, state: InboundDeadLetter): InboundDeadLetterEvent[] => {
  switch (command.type) {
    case 'DeadLetterInboundEvent':
      return state.status === 'Filed' ? [] : [{ type: 'InboundEventDeadLettered', data: command.data }];
    case 'RedriveInboundEvent': {
      if (state.status === 'Empty') throw new NotFoundError(`inbound dead letter ${command.data.inboundDeadLetterId} not found`);
      // Re-driven already and not filed again since: the mapping has it (or mapped it); nothing to hand back twice.
      if (state.status === 'Redriven') return [];
      return [{ type: 'InboundEventRedriven', data: { inboundDeadLetterId: command.data.inboundDeadLetterId, ...state.delivery } }];
    }
    default: {
      const exhaustive: never = command;
      throw new Error(`unknown command ${JSON.stringify(exhaustive)}`);
    }
  }
};

export const inboundDeadLetterDecider: Decider<InboundDeadLetterCommand, InboundDeadLetterEvent, InboundDeadLetter> = {
  initialState,
  evolve,
  decide,
};

/** One dead-lettered inbound delivery, keyed by `inboundDeadLetterIdOf` its inbox and delivery. */
export const inboundDeadLetterAggregate = defineAggregate({
  name: 'inbound-dead-letter',
  stream: 'integrations.inbound-dead-letter',
  decider: inboundDeadLetterDecider,
  id: 'inboundDeadLetterId',
  events: { namespace: 'commerce.ledger.integrations', types: ['InboundEventDeadLettered', 'InboundEventRedriven'] },
});
