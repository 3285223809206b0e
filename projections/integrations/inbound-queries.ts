import type { Knex } from 'knex';
import { liveSchema } from '../../ledger/projection.ts';
import { inboundProjection } from './inbound-projection.ts';

const schema = liveSchema(inboundProjection);

export type InboundDeadLetterRow = {
  id: string;
  tenant_id: string;
  org_id: string;
  connection_id: string;
  inbox_id: string;
  delivery_id: string;
  event: string;
  external_id: string | null;
  reason: string;
  status: 'DEAD_LETTERED' | 'REDRIVEN';
  times_dead_lettered: number;
  dead_lettered_at: Date;
  redriven_at: Date | null;
};

type Scope = { tenantId: string; orgId: string };

/** A connection's dead-lettered inbound deliveries (re-driven ones too), most recent first, at most `limit`. */
export const listInboundDeadLetters = (
  db: Knex,
  { tenantId, orgId }: Scope,
  connectionId: string,
  limit = 100,
): Promise<InboundDeadLetterRow[]> =>
  db(`${schema}.dead_letters`)
    .where({ tenant_id: tenantId, org_id: orgId, connection_id: connectionId })
    .orderBy([{ column: 'dead_lettered_at', order: 'desc' }, { column: 'id' }])
    .limit(limit);

/** For the operator (the DLQ CLI): every tenant's deliveries still dead-lettered, oldest first. */
export const pendingInboundDeadLetters = (db: Knex, limit = 1000): Promise<InboundDeadLetterRow[]> =>
  db(`${schema}.dead_letters`)
    .where({ status: 'DEAD_LETTERED' })
    .orderBy([{ column: 'dead_lettered_at' }, { column: 'id' }])
    .limit(limit);
