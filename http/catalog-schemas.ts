import { z } from 'zod';
import { MAX_SORT_ORDER } from '../commands/catalog/product.ts';
import { taxonomyIdOf } from '../commands/catalog/taxonomy.ts';
import { NotFoundError } from '../ledger/errors.ts';
import type { Scope } from '../projections/catalog/catalog-queries.ts';
import { text, timestamp, uuid } from './schemas.ts';

/** Request and response pieces the taxonomy, brand and media routes share. */
export const name = text().trim().min(1).max(200);
export const optionalDescription = text().max(10_000).nullish();
export const slug = text()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'lower-case letters, digits and single hyphens');
/** What the document says of an http(s) URL: the check itself is the URL parser's, in the refinement below. */
const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]';
/** Absolute http(s) URL, at most 2048 characters. */
export const httpUrl = text()
  .max(2048)
  .refine((text) => {
    try {
      const url = new URL(text);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an absolute http(s) URL')
  .meta({ format: 'uri', pattern: HTTP_URL_PATTERN });
export const idList = z.array(uuid).max(500);
/** A media's place among its product's media, as the product decider bounds it. */
export const sortOrder = z.number().int().min(-MAX_SORT_ORDER).max(MAX_SORT_ORDER);

/**
 * A body field taken in both spellings, the spec's camelCase (`parentId`) and the snake_case every response uses
 * (`parent_id`), so a client may send back what it read. One of the two, never both (400 naming them).
 */
export const oneSpelling =
  (...pairs: [camel: string, snake: string][]) =>
  (body: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    for (const [camel, snake] of pairs) {
      if (body[camel] !== undefined && body[snake] !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [snake],
          message: `must not be given together with ${camel}: they are one field, spelt two ways`,
        });
      }
    }
  };

/** The fields every catalog record carries, like a product. */
export const ownedFields = { id: uuid, org_id: uuid, tenant_id: uuid, created_at: timestamp, updated_at: timestamp };

export const withTimestamps = <Row extends { created_at: Date; updated_at: Date }>(row: Row) => ({
  ...row,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/** A record the write just created; read-your-writes guarantees it is there unless the write was refused. */
export const created = <Row>(row: Row | undefined, what: string): Row => {
  if (!row) throw new NotFoundError(`${what} not found`);
  return row;
};

/** The caller's taxonomy: one aggregate per tenant and org. */
export const taxonomyOf = ({ tenantId, orgId }: Scope): string => taxonomyIdOf(tenantId, orgId);
