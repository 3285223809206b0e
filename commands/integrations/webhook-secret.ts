import { createHmac } from 'node:crypto';
import { uuidv5 } from '../../ledger/uuid-v5.ts';
import { defineAggregate } from '../../ledger/aggregate.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';

/**
 * A tenant's (tenant and org's) secret for signing inbound webhooks. The secret itself never enters the log: it is
 * derived from the service's key and the secret's version (`webhookSecretOf`), so the log records only rotations.
 * Version 0 exists without any event. A rotation keeps the previous version valid until `previousValidUntil`, so
 * the platform can be given the new secret without losing deliveries signed with the old one meanwhile.
 */
const WEBHOOK_SECRET_NAMESPACE = '9b4e2c71-5d3a-4f86-b0e9-2a7c8d1f6e35';

/** Used when WEBHOOK_SECRET_KEY is unset: public, so every secret derived from it is guessable (development only). */
export const DEVELOPMENT_WEBHOOK_SECRET_KEY = 'commerce-ledger-development-webhook-secret-key';

export const webhookSecretIdOf = (tenantId: string, orgId: string): string => uuidv5(`${tenantId}/${orgId}`, WEBHOOK_SECRET_NAMESPACE);

/** `hex(HMAC-SHA256(key, "<tenantId>/<orgId>/<version>"))`: 64 hex characters, the key the platform signs bodies with. */
export const webhookSecretOf = (key: string, tenantId: string, orgId: string, version: number): string =>
  createHmac('sha256', key).update(`${tenantId}/${orgId}/${version}`).digest('hex');

/**
 * The same version's Standard Webhooks secret for the notices we send: `whsec_` + base64 of
 * `HMAC-SHA256(key, "notices:<tenantId>/<orgId>/<version>")` (32 bytes). A key of its own, so the platform that holds
 * the inbound secret cannot sign notices to the tenant; it rotates with it (docs/decisions.md, "Export completion notices").
 */
export const noticeSecretOf = (key: string, tenantId: string, orgId: string, version: number): string =>
  `whsec_${createHmac('sha256', key).update(`notices:${tenantId}/${orgId}/${version}`).digest('base64')}`;

// ── Events ──────────────────────────────────────────────────────────────────
export type WebhookSecretRotated = Event<
  'WebhookSecretRotated',
  {
    webhookSecretId: string;
    version: number;
    previousVersion: number;
    /** Epoch milliseconds until which the previous version is still accepted. */
    previousValidUntil: number;
  }
>;
export type WebhookSecretEvent = WebhookSecretRotated;

// ── State ───────────────────────────────────────────────────────────────────
export type WebhookSecret = { version: number };

export const initialState = (): WebhookSecret => ({ version: 0 });

export const evolve = (state: WebhookSecret, event: WebhookSecretEvent): WebhookSecret => {
  switch (event.type) {
    case 'WebhookSecretRotated':
      return { version: event.data.version };
    default: {
      const exhaustive: never = event.type;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
/** `graceMs`: how long the version being replaced stays valid (WEBHOOK_SECRET_GRACE_MS at the edge). */
export type RotateWebhookSecret = Command<'RotateWebhookSecret', { webhookSecretId: string; graceMs: number }>;
export type WebhookSecretCommand = RotateWebhookSecret;

/** Every rotation is a new version: the tenant asks for one because the current secret may have leaked. */
export const decide = (command: WebhookSecretCommand, state: WebhookSecret): WebhookSecretEvent[] => {
  switch (command.type) {
    case 'RotateWebhookSecret': {
      const { webhookSecretId, graceMs } = command.data;
      return [
        {
          type: 'WebhookSecretRotated',
          data: {
            webhookSecretId,
            version: state.version + 1,
            previousVersion: state.version,
            previousValidUntil: command.metadata.issuedAt + Math.max(0, graceMs),
          },
        },
      ];
    }
    default: {
      const exhaustive: never = command.type;
      throw new Error(`unknown command ${String(exhaustive)}`);
    }
  }
};

export const webhookSecretDecider: Decider<WebhookSecretCommand, WebhookSecretEvent, WebhookSecret> = { initialState, evolve, decide };

/** One per tenant and org, keyed by `webhookSecretIdOf`; its owner is that tenant and org (the single writer's rule). */
export const webhookSecretAggregate = defineAggregate({
  name: 'webhook-secret',
  stream: 'integrations.webhook-secret',
  decider: webhookSecretDecider,
  id: 'webhookSecretId',
  events: { namespace: 'commerce.ledger.integrations', types: ['WebhookSecretRotated'] },
});
