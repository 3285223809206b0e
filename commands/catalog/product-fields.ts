import { z } from 'zod';
import { productStatuses } from './product.ts';
import { text } from '../field-schemas.ts';

/** A product's text fields as every write takes them: the single-item routes and the bulk jobs' items alike. */
export const productTitle = text().trim().min(1).max(500);
export const productDescription = text().max(10_000).nullable();
export const productCategory = text().trim().min(1).max(200).nullable();
export const productSku = text().trim().min(1).max(100);
export const productBrand = text().trim().min(1).max(200);
/** Set by an update only: a product is created ACTIVE (docs/decisions.md, "Product status"). */
export const productStatus = z.enum(productStatuses).describe('ACTIVE or DRAFT; either may follow the other');
