import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { openIssues } from '../../projections/validation/validation-queries.ts';
import { errorResponses, standardHeaders, timestamp, uuid } from '../schemas.ts';

const issue = z
  .object({
    id: uuid.describe('UUIDv5 of tenant, org, issue type and subject: one open problem is one issue'),
    org_id: uuid,
    tenant_id: uuid,
    product_id: uuid.nullable().describe('The product at issue; null for a bulk item that names none'),
    issue_type: z.enum(['MISSING_DESCRIPTION', 'DUPLICATE_SKU', 'INVALID_BARCODE', 'LOW_QUALITY_SCORE', 'BULK_ITEM_FAILED']),
    bulk_job_id: uuid.nullable().describe('For BULK_ITEM_FAILED: the bulk job whose item failed'),
    item_index: z.number().int().nullable().describe('For BULK_ITEM_FAILED: the item’s position in the job’s payload, from 0'),
    severity: z.enum(['WARNING', 'ERROR']),
    message: z.string(),
    resolved: z.boolean(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'ValidationIssue' });

export default async function validationRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/validation', {
    schema: {
      tags: ['validation'],
      summary:
        'Unresolved validation issues, newest first (at most 1000); they are raised and resolved asynchronously from catalog changes',
      headers: standardHeaders,
      response: { 200: z.array(issue), ...errorResponses },
    },
    handler: async (request) =>
      (await openIssues(app.ledger.db, request.principal)).map((row) => ({
        ...row,
        issue_type: row.issue_type as z.infer<typeof issue>['issue_type'],
        severity: row.severity as z.infer<typeof issue>['severity'],
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
      })),
  });
}
