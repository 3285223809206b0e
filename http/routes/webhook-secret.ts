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
import type { Config } from '../../config.ts';
import type { Logger } from '../../ledger/logger.ts';
import type { Scope } from '../../projections/catalog/catalog-queries.ts';
import { findWebhookSecret, versionsInForce } from '../../projections/integrations/webhook-secrets-queries.ts';
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

declare module 'fastify' {
  interface FastifyInstance {
    webhookSecrets: {
      /** The owner's secrets from the read model (version 0 when never rotated). */
      of(db: Knex, scope: Scope, now?: number): Promise<WebhookSecrets>;
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
    app.decorate('webhookSecrets', {
      of: async (db: Knex, scope: Scope, now = Date.now()): Promise<WebhookSecrets> => {
        const row = await findWebhookSecret(db, scope);
        const { current, previous } = versionsInForce(row, now);
        const secretOf = (v: number) => webhookSecretOf(key, scope.tenantId, scope.orgId, v);
        return {
          current: { secret: secretOf(current), version: current },
          noticeSecret: noticeSecretOf(key, scope.tenantId, scope.orgId, current),
          previous: previous ? { ...previous, secret: secretOf(previous.version) } : null,
          rotatedAt: row?.rotated_at ?? null,
          previousValidUntil: row?.previous_valid_until ?? null,
        };
      },
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
      return toBody(await secrets.of(db, request.principal));
    },
  });
}
