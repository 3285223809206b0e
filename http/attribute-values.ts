import type { Knex } from 'knex';
import { z } from 'zod';
import { NotFoundError, ValidationError, type ErrorDetail } from '../ledger/errors.ts';
import type { Scope } from '../projections/catalog/catalog-queries.ts';
import { findOwned, type AttributeRow } from '../projections/catalog/taxonomy-queries.ts';
import { text, uuid } from './schemas.ts';

/**
 * A product's attribute values, keyed by attribute id (docs/decisions.md). A value is non-blank text; a JSON
 * number or boolean is taken as its JSON text ("12.5", "true"), and is returned as text.
 */
const value = z.union([text().trim().min(1).max(2000), z.number(), z.boolean()]).transform(String);
const MAX_ATTRIBUTES = 500;

export const attributeValues = z
  .record(uuid, value)
  .refine((values) => Object.keys(values).length <= MAX_ATTRIBUTES, `at most ${MAX_ATTRIBUTES} attributes`)
  .describe('Attribute values by attribute id (an existing attribute of the tenant); numbers and booleans are kept as their text');
/** On update: the values given replace those of the same attributes, `null` removes one, the others stay. */
export const attributeValueChanges = z
  .record(uuid, value.nullable())
  .refine((values) => Object.keys(values).length <= MAX_ATTRIBUTES, `at most ${MAX_ATTRIBUTES} attributes`)
  .describe('Attribute values to set by attribute id; null removes the value, attributes not named stay as they are');

/** Why a value does not fit its attribute's type, or undefined when it does. */
const misfit = (attribute: AttributeRow, given: string): string | undefined => {
  switch (attribute.type) {
    case 'NUMBER':
      return /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(given) && Number.isFinite(Number(given)) ? undefined : 'must be a number';
    case 'BOOLEAN':
      return given === 'true' || given === 'false' ? undefined : 'must be true or false';
    case 'SELECT':
      return attribute.options.includes(given) ? undefined : `must be one of ${attribute.options.map((o) => JSON.stringify(o)).join(', ')}`;
    default:
      return undefined;
  }
};

/**
 * Each named attribute must exist in the tenant's taxonomy (404) and each value fit its type (400). Checked
 * against the read model at the edge, like template_id: attributes are create-only and never deleted, so the
 * read model saying one exists, with this type and options, cannot be overtaken by a concurrent write.
 */
export async function checkAttributeValues(db: Knex, scope: Scope, values: Record<string, string | null>): Promise<void> {
  const unknown: ErrorDetail[] = [];
  const invalid: ErrorDetail[] = [];
  for (const [attributeId, given] of Object.entries(values)) {
    const path = `body.attributes.${attributeId}`;
    const attribute = await findOwned(db, 'attributes', scope, attributeId);
    if (!attribute) unknown.push({ path, message: 'no such attribute' });
    else if (given !== null) {
      const message = misfit(attribute, given);
      if (message) invalid.push({ path, message });
    }
  }
  if (unknown.length > 0)
    throw new NotFoundError(`attribute ${unknown.map((d) => d.path.slice('body.attributes.'.length)).join(', ')} not found`, unknown);
  if (invalid.length > 0) throw new ValidationError('the body is invalid', invalid);
}
