import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Knex } from 'knex';
import { z } from 'zod';
import {
  DEVELOPMENT_WEBHOOK_SECRET_KEY,
  noticeSecretOf,
  webhookSecretAggregate,
  webhookSecretIdOf,
  webhookSecretOf,
} from '../../commands/integrations/webhook-secret.ts';
import { WEBHOOK_LOOKUP_ENTRIES, WEBHOOK_LOOKUP_TTL_MS } from '../../commands/integrations/webhook-lookups.ts';
import type { Config } from '../../config.ts';
import { ExpiringCache } from '../../ledger/expiring-cache.ts';
import type { Logger } from '../../ledger/logger.ts';
import type { Scope } from '../../projections/catalog/catalog-queries.ts';
import { findConnectionByUnifiedId, type ConnectionRow } from '../../projections/integrations/connections-queries.ts';
import { findWebhookSecret, versionsInForce, type WebhookSecretRow } from '../../projections/integrations/webhook-secrets-queries.ts';
import { errorResponses, standardHeaders, timestamp } from '../schemas.ts';

/** A tenant and org's secrets as of `now`: the current one, and the previous one while its grace lasts. */
export type WebhookSecrets = {
  current: { secret: string; version: number };
  /** The current version's `whsec_` secret that export notices are signed with. */
  noticeSecret: string;
  previous: { secret: string; version: number; validUntil: Date } | null;
  rotatedAt: Date | null;
  /** The previous version's end of grace as recorded, even once passed (null: never rotated). */
  previousValidUntil: Date | null;
};

/** What a delivery naming a provider's connection id needs: the connection, and its owner's secret versions. */
export type WebhookConnection = {
  connection: ConnectionRow | undefined;
  /** The owner's versions row, or (no connection) a tenant-less scope's: an unknown id costs the reads a known one does. */
  versions: WebhookSecretRow | undefined;
};

/** Scopes no tenant has: an unknown connection still costs the reads and the secrets a known one does. */
export const NO_ONE: Scope = { tenantId: '00000000-0000-0000-0000-000000000000', orgId: '00000000-0000-0000-0000-000000000000' };

declare module 'fastify' {
  interface FastifyInstance {
    webhookSecrets: {
      /** The owner's secrets from the read model (version 0 when never rotated). */
      of(db: Knex, scope: Scope, now?: number): Promise<WebhookSecrets>;
      /** The owner's secrets as of `now` from its versions row (as `connection` answered it). */
      inForce(scope: Scope, versions: WebhookSecretRow | undefined, now?: number): WebhookSecrets;
      /** The connection and its owner's versions, kept WEBHOOK_LOOKUP_TTL_MS (commands/integrations/webhook-lookups.ts). */
      connection(unifiedConnectionId: string): Promise<WebhookConnection>;
      /** After a change to a connection or a secret through this instance, once the read model shows it. */
      forget(): void;
      /** A secret of no tenant, for the work an unknown connection must cost as much as a known one. */
      decoy(): string;
      graceMs: number;
    };
  }
}

/** The key the secrets derive from, one per process; registered once at the root (the receiver and the routes share it). */
export const webhookSecretsPlugin = fp(
  async (app: FastifyInstance, { config, logger }: { config: Config; logger: Logger }) => {
    const key = config.WEBHOOK_SECRET_KEY ?? DEVELOPMENT_WEBHOOK_SECRET_KEY;
    if (!config.WEBHOOK_SECRET_KEY) {
      logger.warn('WEBHOOK_SECRET_KEY is unset: webhook secrets derive from a public development key; set it in production');
    }
    const inForce = (scope: Scope, row: WebhookSecretRow | undefined, now = Date.now()): WebhookSecrets => {
      const { current, previous } = versionsInForce(row, now);
      const secretOf = (v: number) => webhookSecretOf(key, scope.tenantId, scope.orgId, v);
      return {
        current: { secret: secretOf(current), version: current },
        noticeSecret: noticeSecretOf(key, scope.tenantId, scope.orgId, current),
        previous: previous ? { ...previous, secret: secretOf(previous.version) } : null,
        rotatedAt: row?.rotated_at ?? null,
        previousValidUntil: row?.previous_valid_until ?? null,
      };
    };
    const { db } = app.ledger;
    // Every delivery read these two rows; redeliveries and one connection's stream of events make them the same rows.
    const connections = new ExpiringCache<WebhookConnection>(
      async (unifiedConnectionId) => {
        const connection = await findConnectionByUnifiedId(db, unifiedConnectionId);
        const owner = connection ? { tenantId: connection.tenant_id, orgId: connection.org_id } : NO_ONE;
        return { connection, versions: await findWebhookSecret(db, owner) };
      },
      { ttlMs: WEBHOOK_LOOKUP_TTL_MS, entries: WEBHOOK_LOOKUP_ENTRIES },
    );
    app.decorate('webhookSecrets', {
      of: async (db: Knex, scope: Scope, now = Date.now()): Promise<WebhookSecrets> =>
        inForce(scope, await findWebhookSecret(db, scope), now),
      inForce,
      connection: (unifiedConnectionId: string) => connections.get(unifiedConnectionId),
      forget: () => connections.forget(),
      decoy: () => webhookSecretOf(key, 'unknown-connection', 'unknown-connection', 0),
      graceMs: config.WEBHOOK_SECRET_GRACE_MS,
    });
  },
  { name: 'webhook-secrets' },
);

const secretBody = z
  .object({
    secret: z.string().describe('64 hex characters: sign each raw webhook body with HMAC-SHA256 keyed with this text'),
    notice_secret: z
      .string()
      .describe(
        'The Standard Webhooks secret (`whsec_` + base64) that verifies the export notices we send (webhook-signature); ' +
          'it rotates with `secret`',
      ),
    version: z.number().int().describe('0 until the first rotation'),
    rotated_at: timestamp.nullable().describe('When the current secret replaced the previous one (null: never rotated)'),
    previous_valid_until: timestamp
      .nullable()
      .describe('Until when the previous secret is still accepted (null: never rotated; may be past)'),
  })
  .meta({ id: 'WebhookSecret' });

const toBody = (secrets: WebhookSecrets): z.infer<typeof secretBody> => ({
  secret: secrets.current.secret,
  notice_secret: secrets.noticeSecret,
  version: secrets.current.version,
  rotated_at: secrets.rotatedAt?.toISOString() ?? null,
  previous_valid_until: secrets.previousValidUntil?.toISOString() ?? null,
});

/** `GET /webhook-secret` and `POST /webhook-secret/rotate` under /api/v1/integrations (authenticated; see http/app.ts). */
export default async function webhookSecretRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute } = app.ledger;
  const secrets = app.webhookSecrets;
  const tags = ['integrations'];

  app.get('/webhook-secret', {
    schema: {
      tags,
      summary: "The organization's webhook secrets: inbound webhooks (X-Unified-Signature) and the notices we send",
      description:
        'Give `secret` to the platform (or the connection provider) that sends `POST /unified/webhook` for your connections: ' +
        'only your secret verifies events for your connections. Give `notice_secret` to the receiver of your export notices: ' +
        'they are signed by Standard Webhooks, and its libraries (standardwebhooks, svix) verify them with it.',
      headers: standardHeaders,
      response: { 200: secretBody, ...errorResponses },
    },
    handler: async (request) => toBody(await secrets.of(db, request.principal)),
  });

  app.post('/webhook-secret/rotate', {
    schema: {
      tags,
      summary: 'Replace the webhook secrets; the previous ones still work for the grace period',
      description:
        'Answers the new secrets. The ones they replace keep working until `previous_valid_until` (WEBHOOK_SECRET_GRACE_MS, ' +
        'default 24 h): inbound webhooks signed with either verify, and notices carry a signature by each; any older one stops at once.',
      headers: standardHeaders,
      response: { 200: secretBody, ...errorResponses },
    },
    handler: async (request) => {
      const { tenantId, orgId } = request.principal;
      await execute(request, webhookSecretAggregate, {
        type: 'RotateWebhookSecret',
        data: { webhookSecretId: webhookSecretIdOf(tenantId, orgId), graceMs: secrets.graceMs },
      });
      secrets.forget();
      return toBody(await secrets.of(db, request.principal));
    },
  });
}
