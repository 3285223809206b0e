import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { catalogFeedAggregate, catalogFeedIdOf, MAX_SELLER_NAME, urlTemplateProblem } from '../../commands/ucp/catalog-feed.ts';
import { NotFoundError } from '../../ledger/errors.ts';
import { findCatalogFeed, type CatalogFeedRow } from '../../projections/feed/feed-queries.ts';
import { urlTemplateSchema } from '../feed-url-template.ts';
import { errorResponses, standardHeaders, text, timestamp } from '../schemas.ts';

export type CatalogFeedRouteOptions = {
  /** How long the link a redirect hands out stays valid. */
  linkSeconds: number;
};

const NO_CACHE = 'no-cache, no-store, must-revalidate';

const settingsBody = z
  .object({
    seller_name: text()
      .trim()
      .min(1)
      .max(MAX_SELLER_NAME)
      .describe('The seller every offer names (schema.org Organization; seller_name in the JSON lines)'),
    product_url_template: z
      .string()
      .superRefine((value, ctx) => {
        const problem = urlTemplateProblem(value);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .describe('Absolute http(s) URL of a product page naming {id} (product id) or {sku} (its SKU, else its first variant’s)')
      .meta({ ...urlTemplateSchema, example: 'https://shop.example.com/products/{sku}' }),
  })
  .strict()
  .meta({ id: 'CatalogFeedSettingsInput' });

const feedBody = z
  .object({
    seller_name: z.string().nullable().describe('null until configured: offers then name no seller'),
    product_url_template: z.string().nullable().describe('null until configured: products then have no url'),
    configured_at: timestamp.nullable(),
    published: z
      .object({
        content_hash: z.string().describe('SHA-256 over both files; the file names are their own SHA-256'),
        product_count: z.number().int().describe('Products listed (ACTIVE, no open ERROR issue)'),
        item_count: z.number().int().describe('Lines of the JSON-lines feed (one per priced variant)'),
        published_at: timestamp,
      })
      .nullable()
      .describe('The feed currently served; null until the first build'),
  })
  .meta({ id: 'CatalogFeed' });

const toBody = (row: CatalogFeedRow | undefined): z.infer<typeof feedBody> => ({
  seller_name: row?.seller_name ?? null,
  product_url_template: row?.product_url_template ?? null,
  configured_at: row?.configured_at?.toISOString() ?? null,
  published:
    row?.content_hash && row.published_at
      ? {
          content_hash: row.content_hash,
          product_count: row.product_count ?? 0,
          item_count: row.item_count ?? 0,
          published_at: row.published_at.toISOString(),
        }
      : null,
});

const redirect = (what: string, seconds: number) =>
  z.null().meta({
    description: `Found: ${what} is at Location`,
    headers: {
      location: {
        type: 'string',
        format: 'uri',
        description:
          `A link to the current file, valid ${seconds} s, that nobody can derive from the file's name (presigned S3, or ` +
          "this service's signed /files/ link). It changes whenever the feed changes; the file under it never does (cacheable forever).",
      },
      'cache-control': { type: 'string', description: `Always \`${NO_CACHE}\`: ask again for the current file` },
    },
  });

/** Feed settings and the feed redirects under /api/v1/ucp (authenticated; see http/app.ts and docs/decisions.md "Catalog feed"). */
export default async function catalogFeedRoutes(fastify: FastifyInstance, { linkSeconds }: CatalogFeedRouteOptions): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute } = app.ledger;
  const tags = ['catalog feed'];

  app.get('/feed-settings', {
    schema: {
      tags,
      summary: 'The catalog feed’s settings and the version currently served',
      headers: standardHeaders,
      response: { 200: feedBody, ...errorResponses },
    },
    handler: async (request) => toBody(await findCatalogFeed(db, request.principal)),
  });

  app.put('/feed-settings', {
    schema: {
      tags,
      summary: 'Set the seller name and the product URL template the feed is built with',
      description: 'The feed is rebuilt within seconds (a first, possibly empty, feed is built for an organization that had none).',
      headers: standardHeaders,
      body: settingsBody,
      response: { 200: feedBody, ...errorResponses },
    },
    handler: async (request) => {
      const { tenantId, orgId } = request.principal;
      const { seller_name: sellerName, product_url_template: productUrlTemplate } = request.body;
      await execute(request, catalogFeedAggregate, {
        type: 'ConfigureCatalogFeed',
        data: { feedId: catalogFeedIdOf(tenantId, orgId), sellerName, productUrlTemplate },
      });
      return toBody(await findCatalogFeed(db, request.principal));
    },
  });

  const redirectTo = (column: 'json_ld_key' | 'jsonl_key', what: string, path: string, summary: string) =>
    app.get(path, {
      schema: {
        tags,
        summary,
        description:
          `302 to ${what}. Only ACTIVE products without an open ERROR validation issue are listed; the feed follows catalog, ` +
          'quality and stock changes within seconds. 404 while the organization has no feed yet.',
        headers: standardHeaders,
        response: { 302: redirect(what, linkSeconds), ...errorResponses },
      },
      handler: async (request, reply) => {
        const row = await findCatalogFeed(db, request.principal);
        const key = row?.[column];
        if (!key) {
          throw new NotFoundError(
            'no catalog feed has been published for this organization yet: it is built within seconds of its first product ' +
              'change or of PUT /api/v1/ucp/feed-settings',
          );
        }
        const location = await app.objectStore.downloadUrl(key, { expiresInSeconds: linkSeconds });
        reply.header('cache-control', NO_CACHE);
        return reply.redirect(location, 302);
      },
    });

  redirectTo('json_ld_key', 'the schema.org JSON-LD ItemList of the catalog', '/catalog.json', 'The catalog feed for AI shopping agents');
  redirectTo(
    'jsonl_key',
    'the agentic-commerce product feed (JSON lines, one per priced variant)',
    '/product-feed.jsonl',
    'The catalog as an agentic-commerce product feed',
  );
}
