import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { catalogCounts } from '../../projections/catalog/catalog-queries.ts';
import { countOwned } from '../../projections/catalog/taxonomy-queries.ts';
import { openIssueCount } from '../../projections/validation/validation-queries.ts';
import { errorResponses, standardHeaders } from '../schemas.ts';

const count = z.number().int().nonnegative();
const stats = z
  .object({
    total_products: count,
    active_products: count,
    total_variants: count,
    total_brands: count,
    total_categories: count,
    total_attributes: count,
    validation_issues: count.describe('Unresolved validation issues'),
  })
  .meta({ id: 'CatalogStatistics' });

export default async function statsRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/stats', {
    schema: { tags: ['catalog'], summary: 'Catalog statistics', headers: standardHeaders, response: { 200: stats, ...errorResponses } },
    handler: async (request) => {
      const { db } = app.ledger;
      const scope = request.principal;
      return {
        ...(await catalogCounts(db, scope)),
        total_brands: await countOwned(db, 'brands', scope),
        total_categories: await countOwned(db, 'categories', scope),
        total_attributes: await countOwned(db, 'attributes', scope),
        validation_issues: await openIssueCount(db, scope),
      };
    },
  });
}
