import { defineAggregate } from '../../ledger/aggregate.ts';
import type { Command, CommandInput, Decider, Event } from '../../ledger/message.ts';
import type { ItemPushEvent, PushAction } from './item-push.ts';

/**
 * The dead-letter topic of product pushes: a push that cannot succeed (a permanent refusal, or retries exhausted) is filed
 * here with its reason, and cleared when re-driven. A follower of the item push it files, decided in the same transaction.
 */

// ── Events ──────────────────────────────────────────────────────────────────
export type PushDeadLettered = Event<
  'PushDeadLettered',
  {
    itemPushId: string;
    connectionId: string;
    productId: string;
    action: PushAction;
    seq: number;
    attempts: number;
    reason: string;
    httpStatus: number | null;
  }
>;
export type DeadLetterRedriven = Event<'DeadLetterRedriven', { itemPushId: string; connectionId: string; productId: string }>;
export type PushDeadLetterEvent = PushDeadLettered | DeadLetterRedriven;

// ── State ───────────────────────────────────────────────────────────────────
export type PushDeadLetter = { filed: boolean };

export const initialState = (): PushDeadLetter => ({ filed: false });

export const evolve = (_state: PushDeadLetter, event: PushDeadLetterEvent): PushDeadLetter => {
  switch (event.type) {
    case 'PushDeadLettered':
      return { filed: true };
    case 'DeadLetterRedriven':
      return { filed: false };
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
export type FileDeadLetter = Command<'FileDeadLetter', PushDeadLettered['data']>;
export type ClearDeadLetter = Command<'ClearDeadLetter', DeadLetterRedriven['data']>;
export type PushDeadLetterCommand = FileDeadLetter | ClearDeadLetter;

// ── Decide ──────────────────────────────────────────────────────────────────
export const decide = (command: PushDeadLetterCommand, state: PushDeadLetter): PushDeadLetterEvent[] => {
  switch (command.type) {
    case 'FileDeadLetter':
      return state.filed ? [] : [{ type: 'PushDeadLettered', data: command.data }];
    case 'ClearDeadLetter':
      return state.filed ? [{ type: 'DeadLetterRedriven', data: command.data }] : [];
    default: {
      const exhaustive: never = command;
      throw new Error(`unknown command ${JSON.stringify(exhaustive)}`);
    }
  }
};

export const pushDeadLetterDecider: Decider<PushDeadLetterCommand, PushDeadLetterEvent, PushDeadLetter> = { initialState, evolve, decide };

export const pushDeadLetterAggregate = defineAggregate({
  name: 'push-dead-letter',
  stream: 'integrations.push-dead-letter',
  decider: pushDeadLetterDecider,
  id: 'itemPushId',
  events: { namespace: 'commerce.ledger.integrations', types: ['PushDeadLettered', 'DeadLetterRedriven'] },
});

/** What an item push's events file in, or clear from, the dead-letter topic. */
export const deadLettersOf = (event: ItemPushEvent): CommandInput<PushDeadLetterCommand>[] => {
  switch (event.type) {
    case 'ItemPushFailed': {
      if (!event.data.deadLettered) return [];
      const { itemPushId, connectionId, productId, action, seq, attempt, reason, httpStatus } = event.data;
      const data = { itemPushId, connectionId, productId, action, seq, attempts: attempt, reason, httpStatus };
      return [{ type: 'FileDeadLetter', data }];
    }
    case 'ItemPushRedriven':
      return [{ type: 'ClearDeadLetter', data: event.data }];
    case 'ItemPushed':
      return [];
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};
