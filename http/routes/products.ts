import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { productAggregate } from '../../commands/catalog/product.ts';
import { NotFoundError } from '../../ledger/errors.ts';
import {
  findProduct,
  findVariant,
  listProducts,
  listVariants,
  type ProductRow,
  type VariantRow,
} from '../../projections/catalog/catalog-queries.ts';
import { findOwned } from '../../projections/catalog/taxonomy-queries.ts';
import { attributeValueChanges, attributeValues, checkAttributeValues } from '../attribute-values.ts';
import { createHeaders, newRecord } from '../idempotency-key.ts';
import {
  productBrand,
  productCategory,
  productDescription,
  productSku,
  productStatus,
  productTitle,
} from '../../commands/catalog/product-fields.ts';
import { currencyCode, decimalAmount, errorResponses, idParams, queryInteger, standardHeaders, text, timestamp, uuid } from '../schemas.ts';

const product = z
  .object({
    id: uuid,
    org_id: uuid,
    tenant_id: uuid,
    title: z.string(),
    description: z.string().nullable(),
    category: z.string().nullable(),
    sku: z.string().nullable(),
    brand: z.string().nullable(),
    template_id: uuid.nullable().describe('The product template it follows'),
    attributes: z.record(z.string(), z.string()).describe('Attribute values by attribute id'),
    status: z.enum(['ACTIVE', 'DRAFT']),
    quality_score: z
      .number()
      .int()
      .min(0)
      .max(100)
      .nullable()
      .describe('0..100 by the rule set in docs/decisions.md; recomputed on every change of the product'),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Product' });

const variant = z
  .object({
    id: uuid,
    product_id: uuid,
    sku: z.string().nullable(),
    barcode: z.string().nullable(),
    price: z.string().nullable().describe('Exact decimal string, e.g. "19.99"'),
    currency: z.string().nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'Variant' });

const title = productTitle;
const description = productDescription;
const category = productCategory;
const sku = productSku;
/** The optional PIM fields beside title, description and category (docs/decisions.md). */
const extras = {
  sku: sku.nullish().describe("The product's own SKU; variants carry theirs"),
  brand: productBrand.nullish().describe('Brand name'),
  template_id: uuid.nullish().describe('An existing product template of the tenant'),
};
const createBody = z
  .object({ title, description: description.optional(), category: category.optional(), ...extras, attributes: attributeValues.optional() })
  .strict();
const updateBody = z
  .object({
    title: title.optional(),
    description: description.optional(),
    category: category.optional(),
    ...extras,
    attributes: attributeValueChanges.optional(),
    status: productStatus.optional(),
  })
  .strict();
const variantBody = z
  .object({
    sku: sku.nullish(),
    barcode: text().trim().min(1).max(64).nullish(),
    price: decimalAmount.nullish(),
    currency: currencyCode.nullish(),
  })
  .strict();
const productParams = z.object({ product_id: uuid });
const productListQuery = z
  .object({
    limit: queryInteger({ min: 1, max: 1000, fallback: 100 }).describe('Page size'),
    offset: queryInteger({ min: 0, fallback: 0 }).describe('Products to skip'),
  })
  .strict();

const toProduct = (row: ProductRow): z.infer<typeof product> => ({
  id: row.id,
  org_id: row.org_id,
  tenant_id: row.tenant_id,
  title: row.title,
  description: row.description,
  category: row.category,
  sku: row.sku,
  brand: row.brand,
  template_id: row.template_id,
  attributes: row.attributes,
  status: row.status as 'ACTIVE' | 'DRAFT',
  quality_score: row.quality_score,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

const toVariant = (row: VariantRow): z.infer<typeof variant> => ({ ...row, created_at: row.created_at.toISOString() });

export default async function productRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute } = app.ledger;
  const readProduct = async (request: FastifyRequest, id: string) => {
    const row = await findProduct(db, request.principal, id);
    if (!row) throw new NotFoundError(`product ${id} not found`);
    return toProduct(row);
  };
  const tags = ['products'];
  /**
   * sku, brand and template_id as the command spells them, only those the body gives. Templates are never
   * deleted, so the read model saying one exists is as good as its single writer saying so.
   */
  const pimFields = async (
    request: FastifyRequest,
    body: { sku?: string | null; brand?: string | null; template_id?: string | null; attributes?: Record<string, string | null> },
  ) => {
    const { sku: s, brand, template_id: templateId, attributes } = body;
    const template = templateId ? await findOwned(db, 'templates', request.principal, templateId) : undefined;
    if (templateId && !template) {
      throw new NotFoundError(`template ${templateId} not found`, [{ path: 'body.template_id', message: 'no such template' }]);
    }
    if (attributes) await checkAttributeValues(db, request.principal, attributes);
    // The template's requirements travel with the link, for the data-quality score (templates never change).
    const templateRequiredAttributeIds = template?.required_attribute_ids;
    return Object.fromEntries(
      Object.entries({ sku: s, brand, templateId, templateRequiredAttributeIds, attributes }).filter(([, value]) => value !== undefined),
    );
  };

  app.get('/products', {
    schema: {
      tags,
      summary: 'Products newest first: the 100 most recent unless limit (1..1000) and offset say otherwise',
      description: 'Ordered by created_at descending, then id; a page shorter than limit is the last.',
      headers: standardHeaders,
      querystring: productListQuery,
      response: { 200: z.array(product), ...errorResponses },
    },
    handler: async (request) => (await listProducts(db, request.principal, request.query)).map(toProduct),
  });

  app.post('/products', {
    schema: {
      tags,
      summary: 'Create a product (status ACTIVE)',
      headers: createHeaders,
      body: createBody,
      response: { 201: product, ...errorResponses },
    },
    handler: async (request, reply) => {
      const { id: productId, idempotency } = newRecord(request, 'product');
      const { title: t, description: d = null, category: c = null } = request.body;
      const data = { productId, title: t, description: d, category: c, ...(await pimFields(request, request.body)) };
      await execute(request, productAggregate, { type: 'CreateProduct', data }, idempotency);
      return reply.code(201).send(await readProduct(request, productId));
    },
  });

  app.get('/products/:id', {
    schema: { tags, summary: 'Read a product', headers: standardHeaders, params: idParams, response: { 200: product, ...errorResponses } },
    handler: async (request) => readProduct(request, request.params.id),
  });

  app.put('/products/:id', {
    schema: {
      tags,
      summary:
        'Change title, description, category, sku, brand, template_id, attribute values or status (ACTIVE | DRAFT); null clears an optional field or removes a value',
      headers: standardHeaders,
      params: idParams,
      body: updateBody,
      response: { 200: product, ...errorResponses },
    },
    handler: async (request) => {
      const productId = request.params.id;
      const { title: t, description: d, category: c, status } = request.body;
      const data = { productId, title: t, description: d, category: c, status, ...(await pimFields(request, request.body)) };
      await execute(request, productAggregate, { type: 'UpdateProduct', data });
      return readProduct(request, productId);
    },
  });

  app.delete('/products/:id', {
    schema: {
      tags,
      summary: 'Delete a product and its variants',
      headers: standardHeaders,
      params: idParams,
      response: { 204: z.null(), ...errorResponses },
    },
    handler: async (request, reply) => {
      const productId = request.params.id;
      await execute(request, productAggregate, { type: 'DeleteProduct', data: { productId } });
      return reply.code(204).send(null);
    },
  });

  app.post('/products/:product_id/variants', {
    schema: {
      tags,
      summary: 'Add a variant to a product',
      headers: createHeaders,
      params: productParams,
      body: variantBody,
      response: { 201: variant, ...errorResponses },
    },
    handler: async (request, reply) => {
      const productId = request.params.product_id;
      const { id: variantId, idempotency } = newRecord(request, 'variant', productId);
      const { sku = null, barcode = null, price = null, currency = null } = request.body;
      const data = { productId, variantId, sku, barcode, price, currency };
      await execute(request, productAggregate, { type: 'AddVariant', data }, idempotency);
      const row = await findVariant(db, request.principal, variantId);
      if (!row) throw new NotFoundError(`variant ${variantId} not found`);
      return reply.code(201).send(toVariant(row));
    },
  });

  app.get('/products/:product_id/variants', {
    schema: {
      tags,
      summary: "A product's variants",
      headers: standardHeaders,
      params: productParams,
      response: { 200: z.array(variant), ...errorResponses },
    },
    handler: async (request) => {
      await readProduct(request, request.params.product_id);
      return (await listVariants(db, request.principal, request.params.product_id)).map(toVariant);
    },
  });
}
