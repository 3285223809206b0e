import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { brandAggregate } from '../../commands/catalog/brand.ts';
import { findOwned, listOwned, type BrandRow } from '../../projections/catalog/taxonomy-queries.ts';
import { created, httpUrl, name, oneSpelling, optionalDescription, ownedFields, withTimestamps } from '../catalog-schemas.ts';
import { createHeaders, newRecord } from '../idempotency-key.ts';
import { errorResponses, standardHeaders } from '../schemas.ts';

const brand = z
  .object({ ...ownedFields, name: z.string(), description: z.string().nullable(), logo_url: z.string().nullable() })
  .meta({ id: 'Brand' });

const createBody = z
  .object({
    name,
    description: optionalDescription,
    logoUrl: httpUrl.nullish().describe('Absolute http(s) URL of the logo'),
    logo_url: httpUrl.nullish().describe('logoUrl as responses spell it; give one of the two'),
  })
  .strict()
  .superRefine(oneSpelling(['logoUrl', 'logo_url']));

const toBrand = (row: BrandRow): z.infer<typeof brand> => withTimestamps(row);

export default async function brandRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute } = app.ledger;
  const tags = ['brands'];

  app.get('/brands', {
    schema: {
      tags,
      summary: 'Brands in creation order (at most 1000)',
      headers: standardHeaders,
      response: { 200: z.array(brand), ...errorResponses },
    },
    handler: async (request) => (await listOwned(db, 'brands', request.principal)).map(toBrand),
  });

  app.post('/brands', {
    schema: { tags, summary: 'Create a brand', headers: createHeaders, body: createBody, response: { 201: brand, ...errorResponses } },
    handler: async (request, reply) => {
      const { id: brandId, idempotency } = newRecord(request, 'brand');
      const { name: n, description = null } = request.body;
      const logoUrl = request.body.logoUrl ?? request.body.logo_url ?? null;
      await execute(request, brandAggregate, { type: 'CreateBrand', data: { brandId, name: n, description, logoUrl } }, idempotency);
      return reply.code(201).send(toBrand(created(await findOwned(db, 'brands', request.principal, brandId), `brand ${brandId}`)));
    },
  });
}
