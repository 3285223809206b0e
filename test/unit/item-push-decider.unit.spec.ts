import { describe, expect, it } from 'vitest';
import {
  FIRST_RETRY_MS,
  itemPushDecider,
  itemPushIdOf,
  MAX_PUSH_ATTEMPTS,
  MAX_RETRY_MS,
  retryDelayMs,
  type ItemPushCommand,
  type ItemPushEvent,
} from '../../commands/integrations/item-push.ts';
import { deadLettersOf, pushDeadLetterDecider } from '../../commands/integrations/push-dead-letter.ts';
import { productPushDecider } from '../../commands/integrations/product-push.ts';
import { ConflictError, NotFoundError } from '../../ledger/errors.ts';
import { metadata } from '../support/command-metadata.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(itemPushDecider);
const target = { itemPushId: itemPushIdOf('c1', 'p1'), connectionId: 'c1', productId: 'p1', action: 'UPSERT' as const, seq: 3 };

const pushed = (remoteId: string | null, created = false): WithoutMetadata<ItemPushCommand> => ({
  type: 'RecordItemPushed',
  data: { ...target, remoteId, created, variants: [] },
});
const failed = (retryable: boolean, retryAfterMs: number | null = null, jitter = 0.5): WithoutMetadata<ItemPushCommand> => ({
  type: 'RecordItemPushFailed',
  data: { ...target, reason: 'POST failed (500)', httpStatus: 500, retryable, retryAfterMs, jitter },
});

/** The events `count` retryable failures in a row leave behind. */
const failures = (count: number): ItemPushEvent[] => {
  const events: ItemPushEvent[] = [];
  for (let i = 0; i < count; i++) events.push(...given(events).when(failed(true)).events());
  return events;
};

describe('item push decider', () => {
  it('records a push with its remote id as the first attempt', () => {
    given()
      .when(pushed('item_1', true))
      .then([{ type: 'ItemPushed', data: { ...target, remoteId: 'item_1', created: true, attempt: 1, variants: [] } }]);
  });

  it('counts attempts across failures and schedules the next one with backoff from the command time', () => {
    const [first] = given()
      .when(failed(true, null, 0))
      .events();
    expect(first).toEqual({
      type: 'ItemPushFailed',
      data: {
        ...target,
        reason: 'POST failed (500)',
        httpStatus: 500,
        retryable: true,
        attempt: 1,
        retryAt: metadata.issuedAt + FIRST_RETRY_MS / 2,
        deadLettered: false,
      },
    });
    const [third] = given(failures(2))
      .when(failed(true, null, 1))
      .events();
    expect(third).toMatchObject({ type: 'ItemPushFailed', data: { attempt: 3, retryAt: metadata.issuedAt + 4 * FIRST_RETRY_MS } });
  });

  it('waits at least as long as the platform asked (Retry-After)', () => {
    const [event] = given()
      .when(failed(true, 30_000, 0))
      .events();
    expect(event).toMatchObject({ data: { attempt: 1, retryAt: metadata.issuedAt + 30_000 } });
  });

  it('a success after failures starts the count again', () => {
    const events = [...failures(3), ...given(failures(3)).when(pushed('item_1')).events()];
    expect(events.at(-1)).toMatchObject({ type: 'ItemPushed', data: { attempt: 4 } });
    given(events)
      .when(failed(true))
      .then([expect.objectContaining({ data: expect.objectContaining({ attempt: 1, deadLettered: false }) })] as ItemPushEvent[]);
  });

  it(`dead-letters the ${MAX_PUSH_ATTEMPTS}th retryable failure in a row, with no retry time`, () => {
    const [last] = given(failures(MAX_PUSH_ATTEMPTS - 1))
      .when(failed(true))
      .events();
    expect(last).toMatchObject({ data: { attempt: MAX_PUSH_ATTEMPTS, deadLettered: true, retryAt: null } });
  });

  it('dead-letters a failure that is not retryable at once', () => {
    const [event] = given().when(failed(false)).events();
    expect(event).toMatchObject({ data: { attempt: 1, retryable: false, deadLettered: true, retryAt: null } });
  });

  it('re-drives only a dead-lettered push', () => {
    const dead = given().when(failed(false)).events();
    given(dead)
      .when({ type: 'RedriveItemPush', data: { itemPushId: target.itemPushId } })
      .then([{ type: 'ItemPushRedriven', data: { itemPushId: target.itemPushId, connectionId: 'c1', productId: 'p1' } }]);
    given(failures(1))
      .when({ type: 'RedriveItemPush', data: { itemPushId: target.itemPushId } })
      .thenThrows(ConflictError);
    given()
      .when({ type: 'RedriveItemPush', data: { itemPushId: target.itemPushId } })
      .thenThrows(NotFoundError);
    const redriven = [
      ...dead,
      ...given(dead)
        .when({ type: 'RedriveItemPush', data: { itemPushId: target.itemPushId } })
        .events(),
    ];
    expect(given(redriven).when(failed(true)).events()[0]).toMatchObject({ data: { attempt: 1, deadLettered: false } });
  });

  it('backs off exponentially, capped, with jitter taking at most half off', () => {
    expect(retryDelayMs(1, 1)).toBe(FIRST_RETRY_MS);
    expect(retryDelayMs(2, 1)).toBe(2 * FIRST_RETRY_MS);
    expect(retryDelayMs(2, 0)).toBe(FIRST_RETRY_MS);
    expect(retryDelayMs(40, 1)).toBe(MAX_RETRY_MS);
    expect(retryDelayMs(40, 0)).toBe(MAX_RETRY_MS / 2);
  });

  it('derives one id per (connection, product)', () => {
    expect(itemPushIdOf('c1', 'p1')).toBe(itemPushIdOf('c1', 'p1'));
    expect(itemPushIdOf('c1', 'p1')).not.toBe(itemPushIdOf('c2', 'p1'));
    expect(itemPushIdOf('c1', 'p1')).not.toBe(itemPushIdOf('c1', 'p2'));
  });
});

describe('push dead letters (the dead-letter topic)', () => {
  const dl = DeciderSpecification.for(pushDeadLetterDecider);
  const [deadEvent] = given().when(failed(false)).events();

  it('files a dead-lettered failure, once, and clears it when re-driven', () => {
    const [file] = deadLettersOf(deadEvent!);
    expect(file).toEqual({
      type: 'FileDeadLetter',
      data: { ...target, attempts: 1, reason: 'POST failed (500)', httpStatus: 500 },
    });
    const filed = dl().when(file!).events();
    expect(filed).toEqual([{ type: 'PushDeadLettered', data: file!.data }]);
    dl(filed).when(file!).thenNothingHappened();
    const redriven = { type: 'ItemPushRedriven' as const, data: { itemPushId: target.itemPushId, connectionId: 'c1', productId: 'p1' } };
    const [clear] = deadLettersOf(redriven);
    dl(filed)
      .when(clear!)
      .then([{ type: 'DeadLetterRedriven', data: redriven.data }]);
    dl().when(clear!).thenNothingHappened();
  });

  it('files nothing for a success or a failure that will be retried', () => {
    const [retrying] = given().when(failed(true)).events();
    expect(deadLettersOf(retrying!)).toEqual([]);
    expect(deadLettersOf(given().when(pushed('i')).events()[0]!)).toEqual([]);
  });
});

describe('product push requests', () => {
  it('records every request (each forces a push)', () => {
    const request = { type: 'RequestProductPush' as const, data: { productId: 'p1', action: 'UPSERT' as const } };
    const once = DeciderSpecification.for(productPushDecider)().when(request).events();
    expect(once).toEqual([{ type: 'ProductPushRequested', data: request.data }]);
    DeciderSpecification.for(productPushDecider)(once)
      .when(request)
      .then([{ type: 'ProductPushRequested', data: request.data }]);
  });
});
