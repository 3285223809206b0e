import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { recentAuditEvents } from '../../projections/audit/audit-queries.ts';
import { errorResponses, standardHeaders, timestamp, uuid } from '../schemas.ts';

const auditEvent = z
  .object({
    id: uuid,
    org_id: uuid,
    tenant_id: uuid,
    actor_email: z.string().nullable(),
    action: z.string().describe('Dotted lower case: product.created, product.updated, product.deleted, variant.created'),
    entity_type: z.string(),
    entity_id: uuid,
    details: z.record(z.string(), z.unknown()),
    ip_address: z.string().nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'AuditEvent' });

export default async function auditRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/audit', {
    schema: {
      tags: ['audit'],
      summary: 'The 100 most recent audit events',
      headers: standardHeaders,
      response: { 200: z.array(auditEvent), ...errorResponses },
    },
    handler: async (request) =>
      (await recentAuditEvents(app.ledger.db, request.principal)).map((row) => ({ ...row, created_at: row.created_at.toISOString() })),
  });
}
