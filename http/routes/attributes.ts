import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { taxonomyAggregate } from '../../commands/catalog/taxonomy.ts';
import { findOwned, listOwned, type AttributeGroupRow, type AttributeRow } from '../../projections/catalog/taxonomy-queries.ts';
import { created, idList, name, optionalDescription, ownedFields, slug, taxonomyOf, withTimestamps } from '../catalog-schemas.ts';
import { createHeaders, newRecord } from '../idempotency-key.ts';
import { errorResponses, standardHeaders, text, uuid } from '../schemas.ts';

const attributeType = z.enum(['TEXT', 'NUMBER', 'BOOLEAN', 'SELECT']);

const attribute = z
  .object({ ...ownedFields, name: z.string(), slug: z.string(), type: attributeType, options: z.array(z.string()) })
  .meta({ id: 'Attribute' });

const attributeGroup = z
  .object({
    ...ownedFields,
    name: z.string(),
    description: z.string().nullable(),
    attribute_ids: z.array(uuid).describe('In display order'),
  })
  .meta({ id: 'AttributeGroup' });

const option = text().trim().min(1).max(200);
const attributeBody = z
  .object({
    name,
    slug,
    type: attributeType.default('TEXT'),
    options: z
      .array(option)
      .max(500)
      .refine((list) => new Set(list).size === list.length, 'options must be distinct')
      .optional()
      .describe('The allowed values of a SELECT attribute (required for SELECT, refused otherwise)'),
  })
  .strict();

const groupBody = z
  .object({ name, description: optionalDescription, attribute_ids: idList.min(1).describe('Existing attributes, in display order') })
  .strict();

const toAttribute = ({ description: _d, ...row }: AttributeRow): z.infer<typeof attribute> =>
  withTimestamps({ ...row, type: row.type as z.infer<typeof attributeType> });
const toGroup = (row: AttributeGroupRow): z.infer<typeof attributeGroup> => withTimestamps(row);

export default async function attributeRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute } = app.ledger;
  const tags = ['taxonomy'];

  app.get('/attributes', {
    schema: {
      tags,
      summary: 'Attributes in creation order (at most 1000)',
      headers: standardHeaders,
      response: { 200: z.array(attribute), ...errorResponses },
    },
    handler: async (request) => (await listOwned(db, 'attributes', request.principal)).map(toAttribute),
  });

  app.post('/attributes', {
    schema: {
      tags,
      summary: 'Define an attribute; its slug is unique in the tenant (409); type defaults to TEXT',
      headers: createHeaders,
      body: attributeBody,
      response: { 201: attribute, ...errorResponses },
    },
    handler: async (request, reply) => {
      const taxonomyId = taxonomyOf(request.principal);
      const { id: attributeId, idempotency } = newRecord(request, 'attribute');
      const { name: n, slug: s, type, options = [] } = request.body;
      const data = { taxonomyId, attributeId, name: n, slug: s, type, options };
      await execute(request, taxonomyAggregate, { type: 'CreateAttribute', data }, idempotency);
      return reply
        .code(201)
        .send(toAttribute(created(await findOwned(db, 'attributes', request.principal, attributeId), `attribute ${attributeId}`)));
    },
  });

  app.get('/attribute-groups', {
    schema: {
      tags,
      summary: 'Attribute groups in creation order (at most 1000)',
      headers: standardHeaders,
      response: { 200: z.array(attributeGroup), ...errorResponses },
    },
    handler: async (request) => (await listOwned(db, 'attribute_groups', request.principal)).map(toGroup),
  });

  app.post('/attribute-groups', {
    schema: {
      tags,
      summary: 'Define an attribute group: a named, ordered set of existing attributes (404 for an unknown one)',
      headers: createHeaders,
      body: groupBody,
      response: { 201: attributeGroup, ...errorResponses },
    },
    handler: async (request, reply) => {
      const taxonomyId = taxonomyOf(request.principal);
      const { id: attributeGroupId, idempotency } = newRecord(request, 'attribute-group');
      const { name: n, description = null, attribute_ids: attributeIds } = request.body;
      const data = { taxonomyId, attributeGroupId, name: n, description, attributeIds };
      await execute(request, taxonomyAggregate, { type: 'CreateAttributeGroup', data }, idempotency);
      return reply
        .code(201)
        .send(
          toGroup(
            created(await findOwned(db, 'attribute_groups', request.principal, attributeGroupId), `attribute group ${attributeGroupId}`),
          ),
        );
    },
  });
}
