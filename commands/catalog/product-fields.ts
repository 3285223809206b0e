import { z } from 'zod';
import { productStatuses } from './product.ts';
import { text, uuid } from '../field-schemas.ts';

/** A product's text fields as every write takes them: the single-item routes and the bulk jobs' items alike. */
export const productTitle = text().trim().min(1).max(500);
export const productDescription = text().max(10_000).nullable();
export const productCategory = text().trim().min(1).max(200).nullable();
export const productSku = text().trim().min(1).max(100);
export const productBrand = text().trim().min(1).max(200);
/** Set by an update only: a product is created ACTIVE (docs/decisions.md, "Product status"). */
export const productStatus = z.enum(productStatuses).describe('ACTIVE or DRAFT; either may follow the other');

const bulkFields = {
  description: productDescription.optional(),
  category: productCategory.optional(),
  sku: productSku.nullish(),
  brand: productBrand.nullish(),
};
/** A bulk import's item: a product as POST /products takes it, less the template and attribute values (docs/decisions.md, "Bulk jobs"). */
export const bulkImportItem = z
  .object({ title: productTitle, ...bulkFields })
  .strict()
  .meta({ id: 'BulkImportItem' });
/** A bulk update's item: the product's id and the fields to change. An import creates ACTIVE products: only an update takes a status. */
export const bulkUpdateItem = z
  .object({ id: uuid, title: productTitle.optional(), ...bulkFields, status: productStatus.optional() })
  .strict()
  .meta({ id: 'BulkUpdateItem' });
/** A bulk delete's item, as the worker reads it (an object's other fields are dropped before). */
export const bulkDeleteItem = z.object({ id: uuid }).strict();
