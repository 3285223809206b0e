import { uuidv5 } from '../../ledger/uuid-v5.ts';
import { defineAggregate } from '../../ledger/aggregate.ts';
import { ConflictError, NotFoundError } from '../../ledger/errors.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';

/**
 * One product on one connection: what became of each push of it to the platform. The push worker does the HTTP call
 * and reports its outcome here; this decider counts the attempts, schedules the next one, and dead-letters a push
 * that cannot succeed. Its id derives from (connection, product), so every report of that pair has one writer.
 */

export type PushAction = 'UPSERT' | 'DELETE';

/** Attempts before a retryable failure is dead-lettered (about 2 minutes of backoff in all). */
export const MAX_PUSH_ATTEMPTS = 8;
export const FIRST_RETRY_MS = 1_000;
export const MAX_RETRY_MS = 5 * 60_000;

const ITEM_PUSH_NAMESPACE = 'a3d4c7e1-58b2-4f0a-9d6e-2b7c1f9e4a30';
export const itemPushIdOf = (connectionId: string, productId: string): string =>
  uuidv5(`${connectionId}/${productId}`, ITEM_PUSH_NAMESPACE);

/** One of the item's variants on the platform; `variantId` is ours, or DEFAULT_VARIANT for a product without variants. */
export type PushedVariant = { variantId: string; remoteId: string };
export const DEFAULT_VARIANT = 'default';

/** What one push wrote (or tried to): `seq` is the request it answers, so a later outcome of an older request is recognised. */
type PushTarget = { itemPushId: string; connectionId: string; productId: string; action: PushAction; seq: number };

// ── Events ──────────────────────────────────────────────────────────────────
export type ItemPushed = Event<
  'ItemPushed',
  PushTarget & {
    /** The platform's item id; null once deleted (or when a DELETE found nothing to delete). */
    remoteId: string | null;
    attempt: number;
    /** Whether this push created the remote item (else it updated, found or deleted it). */
    created: boolean;
    /** The item's variants on the platform after this push: ours (or `default`) to the platform's itemvariant id. */
    variants: PushedVariant[];
  }
>;
export type ItemPushFailed = Event<
  'ItemPushFailed',
  PushTarget & {
    attempt: number;
    reason: string;
    httpStatus: number | null;
    retryable: boolean;
    /** When the next attempt is due (epoch ms); null once dead-lettered. */
    retryAt: number | null;
    deadLettered: boolean;
  }
>;
export type ItemPushRedriven = Event<'ItemPushRedriven', { itemPushId: string; connectionId: string; productId: string }>;
export type ItemPushEvent = ItemPushed | ItemPushFailed | ItemPushRedriven;

// ── State ───────────────────────────────────────────────────────────────────
export type ItemPush =
  | { status: 'Empty' }
  | { status: 'Tracked'; connectionId: string; productId: string; remoteId: string | null; failures: number; deadLettered: boolean };

export const initialState = (): ItemPush => ({ status: 'Empty' });

export const evolve = (state: ItemPush, event: ItemPushEvent): ItemPush => {
  const { connectionId, productId } = event.data;
  const tracked = state.status === 'Tracked' ? state : { status: 'Tracked' as const, connectionId, productId, remoteId: null };
  switch (event.type) {
    case 'ItemPushed':
      return { ...tracked, remoteId: event.data.remoteId, failures: 0, deadLettered: false };
    case 'ItemPushFailed':
      return { ...tracked, failures: event.data.attempt, deadLettered: event.data.deadLettered };
    case 'ItemPushRedriven':
      return { ...tracked, failures: 0, deadLettered: false };
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
export type RecordItemPushed = Command<
  'RecordItemPushed',
  PushTarget & { remoteId: string | null; created: boolean; variants: PushedVariant[] }
>;
export type RecordItemPushFailed = Command<
  'RecordItemPushFailed',
  PushTarget & {
    reason: string;
    httpStatus: number | null;
    retryable: boolean;
    /** The platform's Retry-After, when it gave one: the next attempt waits at least this long. */
    retryAfterMs: number | null;
    /** 0..1, drawn by the worker: spreads retries of many items over the backoff window (the decider stays pure). */
    jitter: number;
  }
>;
export type RedriveItemPush = Command<'RedriveItemPush', { itemPushId: string }>;
export type ItemPushCommand = RecordItemPushed | RecordItemPushFailed | RedriveItemPush;

/** Exponential backoff: attempt 1 waits about FIRST_RETRY_MS, each further one twice as long, capped; jitter takes up to half off. */
export const retryDelayMs = (attempt: number, jitter: number): number => {
  const ceiling = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(attempt - 1, 30));
  return Math.round(ceiling / 2 + (Math.min(Math.max(jitter, 0), 1) * ceiling) / 2);
};

// ── Decide ──────────────────────────────────────────────────────────────────
const pushed = ({ data }: RecordItemPushed, state: ItemPush): ItemPushEvent[] => {
  const attempt = (state.status === 'Tracked' ? state.failures : 0) + 1;
  return [{ type: 'ItemPushed', data: { ...data, attempt } }];
};

const failed = ({ data, metadata }: RecordItemPushFailed, state: ItemPush): ItemPushEvent[] => {
  const { retryAfterMs, jitter, ...target } = data;
  const attempt = (state.status === 'Tracked' ? state.failures : 0) + 1;
  const deadLettered = !data.retryable || attempt >= MAX_PUSH_ATTEMPTS;
  const retryAt = deadLettered ? null : metadata.issuedAt + Math.max(retryAfterMs ?? 0, retryDelayMs(attempt, jitter));
  return [{ type: 'ItemPushFailed', data: { ...target, attempt, retryAt, deadLettered } }];
};

const redrive = ({ data }: RedriveItemPush, state: ItemPush): ItemPushEvent[] => {
  if (state.status !== 'Tracked') throw new NotFoundError(`push ${data.itemPushId} not found`);
  if (!state.deadLettered) throw new ConflictError(`push ${data.itemPushId} is not dead-lettered`);
  return [
    { type: 'ItemPushRedriven', data: { itemPushId: data.itemPushId, connectionId: state.connectionId, productId: state.productId } },
  ];
};

export const decide = (command: ItemPushCommand, state: ItemPush): ItemPushEvent[] => {
  switch (command.type) {
    case 'RecordItemPushed':
      return pushed(command, state);
    case 'RecordItemPushFailed':
      return failed(command, state);
    case 'RedriveItemPush':
      return redrive(command, state);
    default: {
      const exhaustive: never = command;
      throw new Error(`unknown command ${JSON.stringify(exhaustive)}`);
    }
  }
};

export const itemPushDecider: Decider<ItemPushCommand, ItemPushEvent, ItemPush> = { initialState, evolve, decide };

export const itemPushAggregate = defineAggregate({
  name: 'item-push',
  stream: 'integrations.item-push',
  decider: itemPushDecider,
  id: 'itemPushId',
  events: { namespace: 'commerce.ledger.integrations', types: ['ItemPushed', 'ItemPushFailed', 'ItemPushRedriven'] },
});
