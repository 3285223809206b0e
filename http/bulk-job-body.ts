import type { FastifySchemaCompiler } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { bulkJobTypes, type BulkJobType } from '../commands/bulk/bulk-job.ts';
import { bulkImportItem, bulkUpdateItem } from '../commands/catalog/product-fields.ts';
import { uuid } from './schemas.ts';

/**
 * The body of POST /bulk-jobs, twice. `submittedBody` is what the route checks: the job type and some payload; the
 * payload's shape is judged by bulk-payload.ts (400 naming the convention it breaks) and each item's fields when the
 * job runs, so that one bad item fails alone. `documentedBody` is the contract the document publishes: per job type,
 * the forms of docs/decisions.md "Bulk jobs" with the items' field rules, which a client must follow for its items to
 * succeed. A request the contract refuses only for an item's fields is still taken: the item fails in the job.
 */
export const submittedBody = z
  .object({
    job_type: z.enum(bulkJobTypes),
    payload: z.unknown().refine((value) => value !== undefined && value !== null, 'required'),
  })
  .strict();

const items = <T extends z.ZodType>(item: T) => z.array(item).min(1);
const asJsonText = z
  .string()
  .min(1)
  .describe('One of the other forms as JSON text (the spec’s payload_json): the service parses it, then reads it as that form');

const importPayload = z
  .union([items(bulkImportItem), z.object({ items: items(bulkImportItem) }).strict(), asJsonText])
  .describe('An array of products to create, or { "items": [...] } holding it');

const fieldSet = bulkUpdateItem
  .omit({ id: true })
  .meta({ minProperties: 1, description: 'The fields to change, the same for every product named' });
const updatePayload = z
  .union([items(bulkUpdateItem), z.object({ ids: items(uuid), set: fieldSet }).strict(), asJsonText])
  .describe('An array of changes, each naming its product by id, or { "ids": [...], "set": {...} } applying one set of changes to many');

const deleted = z.union([uuid, z.looseObject({ id: uuid }).describe('A product as GET lists it: only its id is read')]);
const deletePayload = z
  .union([items(deleted), z.object({ ids: items(deleted) }).strict(), asJsonText])
  .describe('An array of product ids (or of products), or { "ids": [...] } holding it');

const job = <T extends BulkJobType>(type: T, payload: z.ZodType, id: string) =>
  z
    .object({ job_type: z.literal(type), payload })
    .strict()
    .meta({ id });

export const documentedBody = z
  .discriminatedUnion('job_type', [
    job('BULK_IMPORT', importPayload, 'BulkImportJob'),
    job('BULK_UPDATE', updatePayload, 'BulkUpdateJob'),
    job('BULK_DELETE', deletePayload, 'BulkDeleteJob'),
  ])
  .describe(
    'An item whose fields break these rules does not refuse the request: the job takes it and fails it alone ' +
      '(its error in GET /bulk-jobs/{id}, code MISSING_TITLE or INVALID_FIELD). A payload that fits no form of its job type is refused whole (400).',
  );

/** The route's validator: the document's body is the contract, `submittedBody` the check (see above). */
export const bulkJobValidator = (route: Parameters<FastifySchemaCompiler<unknown>>[0]) =>
  validatorCompiler(route.httpPart === 'body' ? { ...route, schema: submittedBody } : (route as Parameters<typeof validatorCompiler>[0]));
