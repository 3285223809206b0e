import { describe, expect, it } from 'vitest';
import {
  connectionAggregate,
  connectionDecider,
  connectionIdOf,
  type Connection,
  type ConnectionCommand,
  type ConnectionEvent,
} from '../../commands/integrations/connection.ts';
import { AggregateWriter, type Touched } from '../../ledger/aggregate-writer.ts';
import { NotFoundError, ValidationError } from '../../ledger/errors.ts';
import type { EventCodec } from '../../ledger/event-codec.ts';
import { createLogger } from '../../ledger/logger.ts';
import type { Event } from '../../ledger/message.ts';
import { metadata } from '../support/command-metadata.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(connectionDecider);

const connectionId = connectionIdOf('conn-1');
const data = { connectionId, unifiedConnectionId: 'conn-1', provider: 'shopify', category: 'commerce' };
const saved: ConnectionEvent = { type: 'ConnectionSaved', data };
const disconnected: ConnectionEvent = { type: 'ConnectionDisconnected', data: { connectionId } };
const authFailed: ConnectionEvent = { type: 'ConnectionAuthFailed', data: { connectionId, reason: 'revoked' } };
const subscription = { connectionId, subscriptionId: 'sub-1', objectType: 'accounting_order', event: 'created' };
const subscribed: ConnectionEvent = { type: 'ConnectionWebhookSubscribed', data: subscription };

const save: WithoutMetadata<ConnectionCommand> = { type: 'SaveConnection', data };
const disconnect: WithoutMetadata<ConnectionCommand> = { type: 'DisconnectConnection', data: { connectionId } };
const markAuthFailed: WithoutMetadata<ConnectionCommand> = { type: 'MarkConnectionAuthFailed', data: { connectionId, reason: 'revoked' } };
const recordSubscription: WithoutMetadata<ConnectionCommand> = { type: 'RecordWebhookSubscription', data: subscription };

describe('connectionIdOf', () => {
  it('is a UUID that depends on the provider connection id alone', () => {
    expect(connectionIdOf('conn-1')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(connectionIdOf('conn-1')).toBe(connectionId);
    expect(connectionIdOf('conn-2')).not.toBe(connectionId);
  });
});

describe('connection decider', () => {
  describe('SaveConnection', () => {
    it('saves a new connection', () => {
      given().when(save).then([saved]);
    });

    it('changes nothing when the connection is ACTIVE already', () => {
      given([saved]).when(save).thenNothingHappened();
      given([saved, authFailed, saved]).when(save).thenNothingHappened();
    });

    it('reactivates a DISCONNECTED or AUTH_FAILED connection', () => {
      given([saved, disconnected]).when(save).then([saved]);
      given([saved, authFailed]).when(save).then([saved]);
    });
  });

  describe('DisconnectConnection', () => {
    it('disconnects an ACTIVE or AUTH_FAILED connection', () => {
      given([saved]).when(disconnect).then([disconnected]);
      given([saved, authFailed]).when(disconnect).then([disconnected]);
    });

    it('changes nothing when it is DISCONNECTED already', () => {
      given([saved, disconnected]).when(disconnect).thenNothingHappened();
    });

    it('refuses an unknown connection as not found', () => {
      given().when(disconnect).thenThrows(NotFoundError);
    });
  });

  describe('MarkConnectionAuthFailed', () => {
    it('fails an ACTIVE connection', () => {
      given([saved]).when(markAuthFailed).then([authFailed]);
      given([saved, disconnected, saved]).when(markAuthFailed).then([authFailed]);
    });

    it('changes nothing on a DISCONNECTED or AUTH_FAILED one', () => {
      given([saved, disconnected]).when(markAuthFailed).thenNothingHappened();
      given([saved, authFailed]).when(markAuthFailed).thenNothingHappened();
    });

    it('refuses an unknown connection as not found', () => {
      given().when(markAuthFailed).thenThrows(NotFoundError);
    });
  });

  describe('RecordWebhookRefused', () => {
    const refusal = {
      connectionId,
      objectType: 'accounting_order',
      event: 'created',
      reason: 'POST /unified/webhook was rejected (422)',
      httpStatus: 422,
    };
    const refuse: WithoutMetadata<ConnectionCommand> = { type: 'RecordWebhookRefused', data: refusal };
    const refused: ConnectionEvent = { type: 'ConnectionWebhookRefused', data: refusal };

    it('records a refusal once: the retries of the same refusal record nothing, a new reason or one after a success does', () => {
      given([saved]).when(refuse).then([refused]);
      given([saved, refused]).when(refuse).thenNothingHappened();
      given([saved, refused, subscribed]).when(refuse).then([refused]);
      const other = { ...refusal, reason: 'POST /unified/webhook was rejected (400)', httpStatus: 400 };
      given([saved, refused])
        .when({ type: 'RecordWebhookRefused', data: other })
        .then([{ type: 'ConnectionWebhookRefused', data: other }]);
    });

    it('refuses an unknown connection', () => {
      expect(() => given().when(refuse).events()).toThrow(NotFoundError);
    });
  });

  describe('RecordWebhookSubscription', () => {
    it('records a new subscription, whatever the status', () => {
      given([saved]).when(recordSubscription).then([subscribed]);
      given([saved, disconnected]).when(recordSubscription).then([subscribed]);
      given([saved, authFailed]).when(recordSubscription).then([subscribed]);
    });

    it('records each subscription once, across reactivations', () => {
      given([saved, subscribed]).when(recordSubscription).thenNothingHappened();
      given([saved, subscribed, disconnected, saved]).when(recordSubscription).thenNothingHappened();
      const another = { ...recordSubscription, data: { ...subscription, subscriptionId: 'sub-2' } } as WithoutMetadata<ConnectionCommand>;
      given([saved, subscribed])
        .when(another)
        .then([{ type: 'ConnectionWebhookSubscribed', data: { ...subscription, subscriptionId: 'sub-2' } }]);
    });

    it('refuses an unknown connection as not found', () => {
      given().when(recordSubscription).thenThrows(NotFoundError);
    });
  });

  it('walks the whole lifecycle in turn', () => {
    const { events, state } = given().whenInTurn([save, recordSubscription, markAuthFailed, disconnect, save, save, disconnect]);
    expect(events.map((decided) => decided.map((e) => e.type))).toEqual([
      ['ConnectionSaved'],
      ['ConnectionWebhookSubscribed'],
      ['ConnectionAuthFailed'],
      ['ConnectionDisconnected'],
      ['ConnectionSaved'],
      [],
      ['ConnectionDisconnected'],
    ]);
    expect(state).toMatchObject({ status: 'Saved', connectionStatus: 'DISCONNECTED', subscriptionIds: ['sub-1'] });
  });
});

/**
 * The owner rule lives in the single writer, before the decider: a command of another tenant or org finds no
 * connection. The edge answers a save refused this way with 409 (the provider connection belongs to another org).
 */
describe("another organization's commands on an owned connection", () => {
  // A refusal is decided before anything is encoded: a codec call would be a bug.
  const codec = {
    encode: () => {
      throw new Error('nothing may be encoded for a refused command');
    },
  } as unknown as EventCodec;
  const writer = new AggregateWriter({ codec, namespace: '', maxRecordBytes: 1_000_000 }, connectionAggregate, createLogger('silent'));
  const owned = [saved, subscribed].reduce(connectionDecider.evolve, connectionDecider.initialState());
  const touched = new Map<string, Touched<Connection>>([
    [
      connectionId,
      { aggregateId: connectionId, snapshot: { owner: { tenantId: 't1', orgId: 'o1' }, state: owned, version: 2 }, value: Buffer.alloc(0) },
    ],
  ]);

  const decidedFor = async (command: WithoutMetadata<ConnectionCommand>, owner: { tenantId: string; orgId: string }) => {
    const full = { ...command, metadata: { ...metadata, ...owner } } as ConnectionCommand;
    return (await writer.decide(full, undefined, touched)).decision;
  };

  it.each([
    ['another tenant', { tenantId: 't2', orgId: 'o1' }],
    ['another org of the same tenant', { tenantId: 't1', orgId: 'o2' }],
  ])('refuses every command of %s as not found', async (_who, stranger) => {
    for (const command of [
      save,
      disconnect,
      markAuthFailed,
      { ...recordSubscription, data: { ...subscription, subscriptionId: 'sub-9' } },
    ]) {
      const decision = await decidedFor(command as WithoutMetadata<ConnectionCommand>, stranger);
      expect(decision, command.type).toMatchObject({ outcome: 'rejected', error: { kind: 'not_found' } });
    }
  });

  it("decides the owner's own commands", async () => {
    const decision = await decidedFor(save, { tenantId: 't1', orgId: 'o1' });
    expect(decision).toMatchObject({ outcome: 'accepted', events: [] as Event[] });
  });
});

describe('connection decider: default fulfilment location (issue 12)', () => {
  const location = '5d0f3c1e-2a4b-4c6d-8e9f-0a1b2c3d4e5f';
  const setLocation = (locationId: string | null): WithoutMetadata<ConnectionCommand> => ({
    type: 'SetConnectionDefaultLocation',
    data: { connectionId, locationId },
  });
  const locationSet = (locationId: string | null): ConnectionEvent => ({
    type: 'ConnectionDefaultLocationSet',
    data: { connectionId, locationId },
  });

  it('sets, changes and clears the location; the same value again changes nothing', () => {
    given([saved])
      .when(setLocation(location))
      .then([locationSet(location)]);
    given([saved, locationSet(location)])
      .when(setLocation(location))
      .thenNothingHappened();
    given([saved, locationSet(location)])
      .when(setLocation(null))
      .then([locationSet(null)]);
    given([saved]).when(setLocation(null)).thenNothingHappened();
  });

  it('keeps the location through a disconnect and a reactivation', () => {
    const { state } = given([saved, locationSet(location), disconnected, saved]).whenInTurn([]);
    expect(state).toMatchObject({ status: 'Saved', connectionStatus: 'ACTIVE', defaultLocationId: location });
    given([saved, locationSet(location), disconnected])
      .when(setLocation(location))
      .thenNothingHappened();
  });

  it('refuses an unknown connection and a location that is not a UUID', () => {
    given().when(setLocation(location)).thenThrows(NotFoundError);
    given([saved]).when(setLocation('warehouse-1')).thenThrows(ValidationError);
  });
});
