import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { productAggregate } from '../../commands/catalog/product.ts';
import { NotFoundError } from '../../ledger/errors.ts';
import { findVariant, type Scope } from '../../projections/catalog/catalog-queries.ts';
import { findMedia, listMedia, type MediaRow } from '../../projections/catalog/taxonomy-queries.ts';
import { created, httpUrl, ownedFields, sortOrder, withTimestamps } from '../catalog-schemas.ts';
import { createHeaders, newRecord } from '../idempotency-key.ts';
import { errorResponses, standardHeaders, text, uuid } from '../schemas.ts';

const mediaRecord = z
  .object({
    ...ownedFields,
    product_id: uuid,
    variant_id: uuid.nullable(),
    url: z.string(),
    alt_text: z.string().nullable(),
    sort_order: z.number().int(),
  })
  .meta({ id: 'Media' });

const createBody = z
  .object({
    url: httpUrl,
    product_id: uuid.nullish().describe('An existing product of the tenant'),
    variant_id: uuid.nullish().describe('An existing variant of the tenant (of product_id, when both are given)'),
    alt_text: text().max(1000).nullish(),
    sort_order: sortOrder.default(0).describe('Lower numbers appear first'),
  })
  .strict()
  .refine((body) => Boolean(body.product_id || body.variant_id), { message: 'product_id or variant_id is required', path: ['product_id'] });

const listQuery = z.object({ product_id: uuid.optional(), variant_id: uuid.optional() }).strict();

const toMedia = (row: MediaRow): z.infer<typeof mediaRecord> => withTimestamps(row);

export default async function mediaRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute } = app.ledger;
  const tags = ['media'];
  // Only the product's aggregate can vouch for its variant; the read model just says which product to ask.
  const productOfVariant = async (scope: Scope, variantId: string | null): Promise<string> => {
    const variant = variantId === null ? undefined : await findVariant(db, scope, variantId);
    if (!variant) throw new NotFoundError(`variant ${variantId} not found`, [{ path: 'body.variant_id', message: 'no such variant' }]);
    return variant.product_id;
  };

  app.get('/media', {
    schema: {
      tags,
      summary: 'Media, optionally of one product and/or variant, by sort_order (at most 1000)',
      headers: standardHeaders,
      querystring: listQuery,
      response: { 200: z.array(mediaRecord), ...errorResponses },
    },
    handler: async (request) => {
      const { product_id: productId, variant_id: variantId } = request.query;
      return (await listMedia(db, request.principal, { productId, variantId })).map(toMedia);
    },
  });

  app.post('/media', {
    schema: {
      tags,
      summary: 'Attach media to a product or one of its variants (404 when either does not exist in the tenant)',
      headers: createHeaders,
      body: createBody,
      response: { 201: mediaRecord, ...errorResponses },
    },
    handler: async (request, reply) => {
      const { url, variant_id: variantId = null, alt_text: altText = null, sort_order: sortOrder } = request.body;
      const productId = request.body.product_id ?? (await productOfVariant(request.principal, variantId));
      const { id: mediaId, idempotency } = newRecord(request, 'media', productId);
      await execute(
        request,
        productAggregate,
        { type: 'AddMedia', data: { productId, mediaId, variantId, url, altText, sortOrder } },
        idempotency,
      );
      return reply.code(201).send(toMedia(created(await findMedia(db, request.principal, mediaId), `media ${mediaId}`)));
    },
  });
}
