import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  noticeSecretOf,
  webhookSecretAggregate,
  webhookSecretDecider,
  webhookSecretIdOf,
  webhookSecretOf,
  type WebhookSecretCommand,
  type WebhookSecretEvent,
} from '../../commands/integrations/webhook-secret.ts';
import { metadata } from '../support/command-metadata.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(webhookSecretDecider);

const KEY = 'k'.repeat(32);
const TENANT = '5f0c1a52-1c39-4a57-9a4e-0f0d6d7f7a01';
const ORG = '0b6a3c1e-8d2f-4f0a-b1c4-2e9d7a6b5c02';
const webhookSecretId = webhookSecretIdOf(TENANT, ORG);
const DAY = 24 * 60 * 60 * 1000;

const rotate = (graceMs = DAY): WithoutMetadata<WebhookSecretCommand> => ({
  type: 'RotateWebhookSecret',
  data: { webhookSecretId, graceMs },
});
const rotated = (version: number, previousValidUntil: number): WebhookSecretEvent => ({
  type: 'WebhookSecretRotated',
  data: { webhookSecretId, version, previousVersion: version - 1, previousValidUntil },
});

/** A secret derivation answers the same for the same inputs, and differently for another version, tenant, org or key. */
function expectOnePerInput(derive: typeof webhookSecretOf) {
  const secret = derive(KEY, TENANT, ORG, 0);
  expect(derive(KEY, TENANT, ORG, 0)).toBe(secret);
  const others = [
    derive(KEY, TENANT, ORG, 1),
    derive(KEY, ORG, TENANT, 0),
    derive(KEY, TENANT, TENANT, 0),
    derive('j'.repeat(32), TENANT, ORG, 0),
  ];
  expect(new Set([secret, ...others]).size).toBe(5);
}

describe('webhookSecretOf', () => {
  it('is hex HMAC-SHA256 of "<tenant>/<org>/<version>" keyed with the service key: 64 hex characters', () => {
    const secret = webhookSecretOf(KEY, TENANT, ORG, 0);
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(secret).toBe(createHmac('sha256', KEY).update(`${TENANT}/${ORG}/0`).digest('hex'));
  });

  it('differs by version, tenant, org and key, and is stable otherwise', () => {
    expectOnePerInput(webhookSecretOf);
  });
});

describe('noticeSecretOf', () => {
  it('is a Standard Webhooks secret: whsec_ and the base64 of 32 bytes, HMAC-SHA256 of "notices:<tenant>/<org>/<version>"', () => {
    const secret = noticeSecretOf(KEY, TENANT, ORG, 0);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secret).toBe(`whsec_${createHmac('sha256', KEY).update(`notices:${TENANT}/${ORG}/0`).digest('base64')}`);
    expect(() => new Webhook(secret)).not.toThrow();
  });

  it('is a key of its own: not the inbound secret in another spelling, and different by version, tenant, org and key', () => {
    const secret = noticeSecretOf(KEY, TENANT, ORG, 0);
    const bytes = (whsec: string) => Buffer.from(whsec.slice('whsec_'.length), 'base64').toString('hex');
    expect(bytes(secret)).not.toBe(webhookSecretOf(KEY, TENANT, ORG, 0));
    expectOnePerInput(noticeSecretOf);
  });
});

describe('webhookSecretIdOf', () => {
  it('is a UUIDv5 of tenant and org', () => {
    expect(webhookSecretId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(webhookSecretIdOf(TENANT, ORG)).toBe(webhookSecretId);
    expect(webhookSecretIdOf(ORG, TENANT)).not.toBe(webhookSecretId);
  });

  it('keys the aggregate', () => {
    expect(webhookSecretAggregate.aggregateIdOf({ data: { webhookSecretId, graceMs: 0 } })).toBe(webhookSecretId);
    expect(webhookSecretAggregate.events.name).toBe('integrations.webhook-secret.events.v1');
  });
});

describe('webhook secret decider', () => {
  it('rotates version 0 (which needs no event) to 1, the previous valid for the grace from the command time', () => {
    given()
      .when(rotate())
      .then([rotated(1, metadata.issuedAt + DAY)]);
  });

  it('takes the time from the command, never the clock', () => {
    const later = { ...metadata, issuedAt: metadata.issuedAt + 5_000 };
    given()
      .when({ ...rotate(1_500), metadata: later })
      .then([rotated(1, later.issuedAt + 1_500)]);
  });

  it('rotates again from the current version: every rotation is a new one', () => {
    given([rotated(1, 1), rotated(2, 2)])
      .when(rotate(0))
      .then([rotated(3, metadata.issuedAt)]);
    const { events, state } = given().whenInTurn([rotate(), rotate(), rotate()]);
    expect(events.map((e) => e.map((event) => event.data.version))).toEqual([[1], [2], [3]]);
    expect(state).toEqual({ version: 3 });
  });

  it('never grants a grace that ends before the rotation', () => {
    given()
      .when(rotate(-10))
      .then([rotated(1, metadata.issuedAt)]);
  });
});
