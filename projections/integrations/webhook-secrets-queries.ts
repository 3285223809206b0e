import type { Knex } from 'knex';
import { liveSchema } from '../../ledger/projection.ts';
import type { Scope } from '../catalog/catalog-queries.ts';
import { webhookSecretsProjection } from './webhook-secrets-projection.ts';

const schema = liveSchema(webhookSecretsProjection);

export type WebhookSecretRow = {
  id: string;
  tenant_id: string;
  org_id: string;
  version: number;
  previous_version: number;
  previous_valid_until: Date;
  rotated_at: Date;
};

/** The tenant and org's secret versions; undefined while it was never rotated (version 0). */
export const findWebhookSecret = (db: Knex, { tenantId, orgId }: Scope): Promise<WebhookSecretRow | undefined> =>
  db(`${schema}.webhook_secrets`).where({ tenant_id: tenantId, org_id: orgId }).first();

export type VersionsInForce = { current: number; previous: { version: number; validUntil: Date } | null };

/** The versions that sign and verify as of `now`: the current one, and the previous one while its grace lasts. */
export function versionsInForce(row: WebhookSecretRow | undefined, now: number): VersionsInForce {
  const inGrace = row !== undefined && row.previous_valid_until.getTime() > now;
  return {
    current: row?.version ?? 0,
    previous: inGrace ? { version: row.previous_version, validUntil: row.previous_valid_until } : null,
  };
}
