import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { taxonomyAggregate } from '../../commands/catalog/taxonomy.ts';
import { findOwned, listOwned, type TemplateRow } from '../../projections/catalog/taxonomy-queries.ts';
import { created, idList, name, optionalDescription, ownedFields, taxonomyOf, withTimestamps } from '../catalog-schemas.ts';
import { createHeaders, newRecord } from '../idempotency-key.ts';
import { errorResponses, standardHeaders, uuid } from '../schemas.ts';

const template = z
  .object({
    ...ownedFields,
    name: z.string(),
    description: z.string().nullable(),
    category_id: uuid.nullable(),
    attribute_group_ids: z.array(uuid).describe('Attribute groups a product of this kind shows, in order'),
    required_attribute_ids: z.array(uuid).describe('Attributes a product of this kind must fill; they feed the quality score'),
  })
  .meta({ id: 'ProductTemplate' });

const templateBody = z
  .object({
    name,
    description: optionalDescription,
    category_id: uuid.nullish().describe('An existing category the template applies to'),
    attribute_group_ids: idList.optional(),
    required_attribute_ids: idList.optional(),
  })
  .strict();

const toTemplate = (row: TemplateRow): z.infer<typeof template> => withTimestamps(row);

export default async function templateRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute } = app.ledger;
  const tags = ['taxonomy'];

  app.get('/templates', {
    schema: {
      tags,
      summary: 'Product templates in creation order (at most 1000)',
      headers: standardHeaders,
      response: { 200: z.array(template), ...errorResponses },
    },
    handler: async (request) => (await listOwned(db, 'templates', request.principal)).map(toTemplate),
  });

  app.post('/templates', {
    schema: {
      tags,
      summary:
        'Define a product template: a category and the attribute groups and required attributes of its products (404 for unknown references)',
      headers: createHeaders,
      body: templateBody,
      response: { 201: template, ...errorResponses },
    },
    handler: async (request, reply) => {
      const taxonomyId = taxonomyOf(request.principal);
      const { id: templateId, idempotency } = newRecord(request, 'template');
      const {
        name: n,
        description = null,
        category_id: categoryId = null,
        attribute_group_ids: attributeGroupIds = [],
        required_attribute_ids: requiredAttributeIds = [],
      } = request.body;
      await execute(
        request,
        taxonomyAggregate,
        {
          type: 'CreateTemplate',
          data: { taxonomyId, templateId, name: n, description, categoryId, attributeGroupIds, requiredAttributeIds },
        },
        idempotency,
      );
      return reply
        .code(201)
        .send(toTemplate(created(await findOwned(db, 'templates', request.principal, templateId), `template ${templateId}`)));
    },
  });
}
