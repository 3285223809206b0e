import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { taxonomyAggregate } from '../../commands/catalog/taxonomy.ts';
import { findOwned, listOwned, type CategoryRow } from '../../projections/catalog/taxonomy-queries.ts';
import { created, name, oneSpelling, optionalDescription, ownedFields, slug, taxonomyOf, withTimestamps } from '../catalog-schemas.ts';
import { createHeaders, newRecord } from '../idempotency-key.ts';
import { errorResponses, standardHeaders, uuid } from '../schemas.ts';

const category = z
  .object({ ...ownedFields, name: z.string(), slug: z.string(), description: z.string().nullable(), parent_id: uuid.nullable() })
  .meta({ id: 'Category' });

const createBody = z
  .object({
    name,
    slug,
    description: optionalDescription,
    parentId: uuid.nullish().describe('An existing category of the same tenant and org'),
    parent_id: uuid.nullish().describe('parentId as responses spell it; give one of the two'),
  })
  .strict()
  .superRefine(oneSpelling(['parentId', 'parent_id']));

const toCategory = (row: CategoryRow): z.infer<typeof category> => withTimestamps(row);

export default async function categoryRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute } = app.ledger;
  const tags = ['taxonomy'];

  app.get('/categories', {
    schema: {
      tags,
      summary: 'Categories in creation order (at most 1000)',
      headers: standardHeaders,
      response: { 200: z.array(category), ...errorResponses },
    },
    handler: async (request) => (await listOwned(db, 'categories', request.principal)).map(toCategory),
  });

  app.post('/categories', {
    schema: {
      tags,
      summary: 'Create a category; its slug is unique in the tenant (409), its parent must exist (404)',
      headers: createHeaders,
      body: createBody,
      response: { 201: category, ...errorResponses },
    },
    handler: async (request, reply) => {
      const taxonomyId = taxonomyOf(request.principal);
      const { id: categoryId, idempotency } = newRecord(request, 'category');
      const { name: n, slug: s, description = null } = request.body;
      const parentId = request.body.parentId ?? request.body.parent_id ?? null;
      const data = { taxonomyId, categoryId, name: n, slug: s, description, parentId };
      await execute(request, taxonomyAggregate, { type: 'CreateCategory', data }, idempotency);
      return reply
        .code(201)
        .send(toCategory(created(await findOwned(db, 'categories', request.principal, categoryId), `category ${categoryId}`)));
    },
  });
}
