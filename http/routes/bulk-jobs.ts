import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { bulkJobAggregate, bulkJobTypes } from '../../commands/bulk/bulk-job.ts';
import { NotFoundError } from '../../ledger/errors.ts';
import { findJob, itemErrors, listJobs, type BulkJobRow } from '../../projections/bulk/bulk-queries.ts';
import { bulkJobValidator, documentedBody } from '../bulk-job-body.ts';
import { bulkItemsOf, chunksOf, payloadTextBytes, payloadTextPieces, payloadValue } from '../bulk-payload.ts';
import { jsonEndingWithText } from '../streamed-json.ts';
import { createHeaders, newRecord } from '../idempotency-key.ts';
import { errorBody, errorResponses, idParams, standardHeaders, timestamp, uuid } from '../schemas.ts';

/** How many item errors GET /bulk-jobs/{id} lists (the validation issues list them all). */
const LISTED_ERRORS = 1_000;
/** Chunks of a POST out at once: enough to fill the producer's rounds, few against a full-size payload's 50. */
const CHUNKS_IN_FLIGHT = 4;

const jobType = z.enum(bulkJobTypes);
const bulkJob = z
  .object({
    id: uuid,
    org_id: uuid,
    tenant_id: uuid,
    job_type: jobType,
    status: z.enum(['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED']),
    total_items: z.number().int().nullable().describe('Set when processing starts'),
    processed_items: z.number().int().nullable().describe('Items applied so far; null before processing starts'),
    failed_items: z.number().int().nullable().describe('Items that could not be applied; the job ends FAILED if any'),
    created_by: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'BulkJob' });
const createdJob = bulkJob
  .extend({ payload_json: z.string().describe('The submitted payload as a JSON string') })
  .meta({ id: 'CreatedBulkJob' });
const itemError = z.object({
  item_index: z.number().int().describe('The item’s position in the payload, from 0'),
  code: z.enum(['MISSING_TITLE', 'INVALID_FIELD', 'PRODUCT_NOT_FOUND', 'CONFLICT', 'REJECTED']),
  message: z.string(),
  product_id: uuid.nullable(),
});
const jobWithErrors = bulkJob.extend({ errors: z.array(itemError).describe(`The first ${LISTED_ERRORS} item errors, by item`) });

const toJob = (row: BulkJobRow): z.infer<typeof bulkJob> => ({
  id: row.id,
  org_id: row.org_id,
  tenant_id: row.tenant_id,
  job_type: row.job_type,
  status: row.status,
  total_items: row.total_items,
  processed_items: row.processed_items,
  failed_items: row.failed_items,
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

export type BulkLimits = { maxItems: number; bodyLimit: number; chunkBytes: number };

export default async function bulkJobRoutes(fastify: FastifyInstance, limits: BulkLimits): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute } = app.ledger;
  const tags = ['bulk jobs'];

  app.post('/bulk-jobs', {
    bodyLimit: limits.bodyLimit,
    schema: {
      tags,
      summary: `Submit a bulk import, update or delete of at most ${limits.maxItems} items (PENDING); processed in the background`,
      headers: createHeaders,
      body: documentedBody,
      response: { 200: createdJob, ...errorResponses, 413: errorBody, 429: errorBody },
    },
    validatorCompiler: bulkJobValidator,
    handler: async (request, reply) => {
      const { job_type: type, payload } = request.body;
      const value = payloadValue(payload);
      const items = bulkItemsOf(type, value, limits.maxItems);
      // Its request paid for one write; each item is one.
      app.rateLimits.chargeWrites(request, reply, items.length - 1);
      const { id: jobId, idempotency } = newRecord(request, 'bulk-job');
      // In order on one partition, a few at a time: each chunk's text is made as it goes out, and no more of them are
      // held (here, in the processor thread, in the producer) than CHUNKS_IN_FLIGHT.
      const inFlight: Promise<unknown>[] = [];
      let chunkCount = 0;
      for (const chunk of chunksOf(items, limits.chunkBytes)) {
        if (inFlight.length >= CHUNKS_IN_FLIGHT) await inFlight.shift();
        const attaching = execute(request, bulkJobAggregate, { type: 'AttachBulkItems', data: { jobId, ...chunk } }, undefined, {
          until: 'committed',
        });
        // Awaited in turn; one refused while an earlier one is awaited is not left unhandled meanwhile.
        attaching.catch(() => undefined);
        inFlight.push(attaching);
        chunkCount++;
      }
      await Promise.all(inFlight);
      // The job exists only once the last chunk is attached and it is submitted.
      const submitted = { jobId, jobType: type, totalItems: items.length, chunkCount, payloadBytes: payloadTextBytes(payload) };
      await execute(request, bulkJobAggregate, { type: 'SubmitBulkJob', data: submitted }, idempotency);
      const row = await findJob(db, request.principal, jobId);
      if (!row) throw new NotFoundError(`bulk job ${jobId} not found`);
      // The payload's text is written into the answer as it is sent: a stream, which the response schema above
      // documents but fastify does not serialize (the job's fields are checked against it here).
      const answer = jsonEndingWithText(bulkJob.parse(toJob(row)), 'payload_json', payloadTextPieces(payload));
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(answer);
    },
  });

  app.get('/bulk-jobs', {
    schema: {
      tags,
      summary: 'The 100 most recent bulk jobs of one type, newest first',
      headers: standardHeaders,
      querystring: z.object({ type: jobType.default('BULK_UPDATE') }).strict(),
      response: { 200: z.array(bulkJob), ...errorResponses },
    },
    handler: async (request) => (await listJobs(db, request.principal, request.query.type)).map(toJob),
  });

  app.get('/bulk-jobs/:id', {
    schema: {
      tags,
      summary: 'A bulk job with its item errors',
      headers: standardHeaders,
      params: idParams,
      response: { 200: jobWithErrors, ...errorResponses },
    },
    handler: async (request) => {
      const row = await findJob(db, request.principal, request.params.id);
      if (!row) throw new NotFoundError(`bulk job ${request.params.id} not found`);
      const errors = await itemErrors(db, row.id, LISTED_ERRORS);
      return { ...toJob(row), errors: errors.map((e) => ({ ...e, code: e.code as z.infer<typeof itemError>['code'] })) };
    },
  });
}
