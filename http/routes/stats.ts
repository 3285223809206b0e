import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { catalogCounts } from '../../projections/catalog/catalog-queries.ts';
import { errorResponses, standardHeaders } from '../schemas.ts';

const count = z.number().int().nonnegative();
const stats = z
  .object({
    total_products: count,
    active_products: count,
    total_variants: count,
    total_brands: count,
    total_categories: count,
    validation_issues: count,
  })
  .meta({ id: 'CatalogStatistics' });

export default async function statsRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/stats', {
    schema: { tags: ['catalog'], summary: 'Catalog statistics', headers: standardHeaders, response: { 200: stats, ...errorResponses } },
    // Brands, categories and validation issues have no read model yet; they count as zero until they do.
    handler: async (request) => ({ ...(await catalogCounts(app.ledger.db, request.principal)), total_brands: 0, total_categories: 0, validation_issues: 0 }),
  });
}
