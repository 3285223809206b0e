import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { catalogFeedAggregate, catalogFeedIdOf } from '../../commands/ucp/catalog-feed.ts';
import { countryProblem } from '../../commands/ucp/countries.ts';
import {
  httpUrlProblem,
  ITEM_CONDITIONS,
  MAX_RETURN_WINDOW_DAYS,
  MAX_SELLER_NAME,
  MAX_TARGET_COUNTRIES,
  urlTemplateProblem,
  type CatalogFeedSettings,
} from '../../commands/ucp/feed-settings.ts';
import { feedProjection } from '../../projections/feed/feed-projection.ts';
import { feedSettingsOf, findCatalogFeed, type CatalogFeedRow } from '../../projections/feed/feed-queries.ts';
import { currencyCode, decimalAmount, errorResponses, standardHeaders, text, timestamp } from '../schemas.ts';
import { urlTemplateSchema } from '../feed-url-template.ts';

export type CatalogFeedRouteOptions = {
  /** How long the link a redirect hands out stays valid. */
  linkSeconds: number;
};

const NO_CACHE = 'no-cache, no-store, must-revalidate';
type FileColumn = 'json_ld_key' | 'jsonl_key';

/** A string refined by one of the settings' own checks, so the edge and the decider refuse alike. */
const checked = (problemOf: (value: string) => string | undefined) =>
  text().superRefine((value, ctx) => {
    const problem = problemOf(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
const pageUrl = (what: string) =>
  checked(httpUrlProblem).nullish().describe(`Absolute http(s) URL of ${what}`).meta({ example: 'https://shop.example.com/policies' });
const country = z
  .string()
  .transform((code) => code.toUpperCase())
  .pipe(checked(countryProblem))
  .describe('ISO 3166-1 alpha-2 country code (upper-cased)')
  .meta({ example: 'DE' });

const settingsBody = z
  .object({
    seller_name: text()
      .trim()
      .min(1)
      .max(MAX_SELLER_NAME)
      .describe('The seller every offer names (schema.org Organization; seller.name in the ACP lines)'),
    product_url_template: checked(urlTemplateProblem)
      .describe('Absolute http(s) URL of a product page naming {id} (product id) or {sku} (its SKU, else its first variant’s)')
      .meta({ ...urlTemplateSchema, example: 'https://shop.example.com/products/{sku}' }),
    seller_url: pageUrl("the seller's site"),
    store_country: country.nullish().describe('Where the store is (ISO 3166-1 alpha-2)'),
    target_countries: z
      .array(country)
      .max(MAX_TARGET_COUNTRIES)
      .default([])
      .describe('Where it sells and ships to (ISO 3166-1 alpha-2): the countries of the shipping rate and the return policy'),
    privacy_policy_url: pageUrl("the seller's privacy policy"),
    terms_of_service_url: pageUrl("the seller's terms of service"),
    return_policy_url: pageUrl("the seller's return policy"),
    return_window_days: z
      .number()
      .int()
      .min(0)
      .max(MAX_RETURN_WINDOW_DAYS)
      .nullish()
      .describe('Days a buyer has to return an item; 0: returns are not accepted. Needs target_countries'),
    item_condition: z.enum(ITEM_CONDITIONS).default('new').describe('The condition of every item listed'),
    shipping: z
      .object({ price: decimalAmount, currency: currencyCode })
      .strict()
      .nullish()
      .describe('A flat shipping rate to every target country. Needs target_countries'),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.target_countries.length > 0) return;
    for (const field of ['return_window_days', 'shipping'] as const) {
      if (body[field] !== null && body[field] !== undefined) {
        ctx.addIssue({ code: 'custom', path: [field], message: 'needs target_countries: the countries it applies to' });
      }
    }
  })
  .meta({ id: 'CatalogFeedSettingsInput' });

const settingsOfBody = (body: z.infer<typeof settingsBody>): CatalogFeedSettings => ({
  sellerName: body.seller_name,
  productUrlTemplate: body.product_url_template,
  sellerUrl: body.seller_url ?? null,
  storeCountry: body.store_country ?? null,
  targetCountries: body.target_countries,
  privacyPolicyUrl: body.privacy_policy_url ?? null,
  termsOfServiceUrl: body.terms_of_service_url ?? null,
  returnPolicyUrl: body.return_policy_url ?? null,
  returnWindowDays: body.return_window_days ?? null,
  itemCondition: body.item_condition,
  shippingPrice: body.shipping?.price ?? null,
  shippingCurrency: body.shipping?.currency ?? null,
});

const feedBody = z
  .object({
    seller_name: z.string().nullable().describe('null until configured: offers then name no seller'),
    product_url_template: z.string().nullable().describe('null until configured: products then have no url'),
    seller_url: z.string().nullable(),
    store_country: z.string().nullable(),
    target_countries: z.array(z.string()),
    privacy_policy_url: z.string().nullable(),
    terms_of_service_url: z.string().nullable(),
    return_policy_url: z.string().nullable(),
    return_window_days: z.number().int().nullable(),
    item_condition: z.enum(ITEM_CONDITIONS).describe('The condition of every item listed: new until set otherwise'),
    shipping: z.object({ price: z.string(), currency: z.string() }).nullable(),
    configured_at: timestamp.nullable(),
    published: z
      .object({
        content_hash: z.string().describe('SHA-256 over both files; the file names are their own SHA-256'),
        product_count: z.number().int().describe('Products listed (ACTIVE, no open ERROR issue)'),
        item_count: z.number().int().describe('Variants offered (priced): the variants of the ACP lines, a line per product'),
        published_at: timestamp,
      })
      .nullable()
      .describe('The feed currently served; null until the first build'),
  })
  .meta({ id: 'CatalogFeed' });

const toBody = (row: CatalogFeedRow | undefined): z.infer<typeof feedBody> => {
  const settings = feedSettingsOf(row);
  return {
    seller_name: row?.seller_name ?? null,
    product_url_template: row?.product_url_template ?? null,
    seller_url: settings?.sellerUrl ?? null,
    store_country: settings?.storeCountry ?? null,
    target_countries: settings?.targetCountries ?? [],
    privacy_policy_url: settings?.privacyPolicyUrl ?? null,
    terms_of_service_url: settings?.termsOfServiceUrl ?? null,
    return_policy_url: settings?.returnPolicyUrl ?? null,
    return_window_days: settings?.returnWindowDays ?? null,
    item_condition: settings?.itemCondition ?? 'new',
    shipping:
      settings?.shippingPrice && settings.shippingCurrency ? { price: settings.shippingPrice, currency: settings.shippingCurrency } : null,
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
  };
};

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
  const { db, execute, awaitOutcome } = app.ledger;
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
      summary: 'Set the seller, its policies and the product URL template the feed is built with',
      description:
        'Replaces every setting: a field left out is cleared (item_condition: new). The feed is rebuilt within seconds ' +
        '(a first, possibly empty, feed is built for an organization that had none).',
      headers: standardHeaders,
      body: settingsBody,
      response: { 200: feedBody, ...errorResponses },
    },
    handler: async (request) => {
      const { tenantId, orgId } = request.principal;
      await execute(request, catalogFeedAggregate, {
        type: 'ConfigureCatalogFeed',
        data: { feedId: catalogFeedIdOf(tenantId, orgId), ...settingsOfBody(request.body) },
      });
      return toBody(await findCatalogFeed(db, request.principal));
    },
  });

  /**
   * A feed asked for before its first build: requested (once, however many ask at once), built at once by the feed
   * processor, and awaited (COMMAND_TIMEOUT_MS, then 503). See docs/decisions.md "A tenant without a feed".
   */
  const firstFeed = async (request: FastifyRequest, column: FileColumn): Promise<string> => {
    const { tenantId, orgId } = request.principal;
    const command = { type: 'RequestCatalogFeed', data: { feedId: catalogFeedIdOf(tenantId, orgId) } } as const;
    await execute(request, catalogFeedAggregate, command, undefined, { until: 'committed' });
    return awaitOutcome(feedProjection.name, async () => (await findCatalogFeed(db, request.principal))?.[column] ?? undefined);
  };

  const redirectTo = (column: FileColumn, what: string, path: string, summary: string) =>
    app.get(path, {
      schema: {
        tags,
        summary,
        description:
          `302 to ${what}. Only ACTIVE products without an open ERROR validation issue are listed; the feed follows catalog, ` +
          'quality and stock changes within seconds. An organization without a feed yet gets its first one built at once.',
        headers: standardHeaders,
        response: { 302: redirect(what, linkSeconds), ...errorResponses },
      },
      handler: async (request, reply) => {
        const key = (await findCatalogFeed(db, request.principal))?.[column] ?? (await firstFeed(request, column));
        const location = await app.objectStore.downloadUrl(key, { expiresInSeconds: linkSeconds });
        reply.header('cache-control', NO_CACHE);
        return reply.redirect(location, 302);
      },
    });

  redirectTo('json_ld_key', 'the schema.org JSON-LD ItemList of the catalog', '/catalog.json', 'The catalog feed for AI shopping agents');
  redirectTo(
    'jsonl_key',
    'the Agentic Commerce Protocol products.jsonl (a Product per line, with its priced variants)',
    '/product-feed.jsonl',
    'The catalog as an agentic-commerce product feed',
  );
}
