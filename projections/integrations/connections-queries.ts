import type { Knex } from 'knex';
import type { ConnectionStatus } from '../../commands/integrations/connection.ts';
import { liveSchema } from '../../ledger/projection.ts';
import type { Scope } from '../catalog/catalog-queries.ts';
import { connectionsProjection } from './connections-projection.ts';

const schema = liveSchema(connectionsProjection);

export type ConnectionRow = {
  id: string;
  tenant_id: string;
  org_id: string;
  unified_connection_id: string;
  provider: string;
  category: string;
  status: ConnectionStatus;
  status_reason: string | null;
  webhook_subscription_id: string | null;
  webhook_problem: string | null;
  /** Where the connection's mapped orders reserve stock (null: none). */
  default_location_id: string | null;
  created_at: Date;
  updated_at: Date;
};

const connections = (db: Knex) => db(`${schema}.connections`);

/** The usable connections of a tenant's org, in creation order (oldest first), at most `limit`. */
export const listActiveConnections = (db: Knex, { tenantId, orgId }: Scope, limit = 1000): Promise<ConnectionRow[]> =>
  connections(db)
    .where({ tenant_id: tenantId, org_id: orgId, status: 'ACTIVE' })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .limit(limit);

/** One of the org's connections, whatever its status; another org's is not there. */
export const findOwnedConnection = (db: Knex, { tenantId, orgId }: Scope, id: string): Promise<ConnectionRow | undefined> =>
  connections(db).where({ tenant_id: tenantId, org_id: orgId, id }).first();

/** The connection the provider knows by this id, whoever owns it (the inbound webhook names only the provider's id). */
export const findConnectionByUnifiedId = (db: Knex, unifiedConnectionId: string): Promise<ConnectionRow | undefined> =>
  connections(db).where({ unified_connection_id: unifiedConnectionId }).first();
