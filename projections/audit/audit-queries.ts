import type { Knex } from 'knex';
import { liveSchema } from '../../ledger/projection.ts';
import type { Scope } from '../catalog/catalog-queries.ts';
import { auditProjection } from './audit-projection.ts';

export type AuditRow = {
  id: string;
  org_id: string;
  tenant_id: string;
  actor_email: string | null;
  action: string;
  entity_type: string;
  entity_id: string;
  details: Record<string, unknown>;
  ip_address: string | null;
  created_at: Date;
};

export const recentAuditEvents = (db: Knex, { tenantId, orgId }: Scope, limit = 100): Promise<AuditRow[]> =>
  db(`${liveSchema(auditProjection)}.audit_events`)
    .where({ tenant_id: tenantId, org_id: orgId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'log_partition', order: 'desc' },
      { column: 'log_offset', order: 'desc' },
    ])
    .limit(limit)
    .select('id', 'org_id', 'tenant_id', 'actor_email', 'action', 'entity_type', 'entity_id', 'details', 'ip_address', 'created_at');
