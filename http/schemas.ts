import { Decimal } from 'decimal.js';
import { z } from 'zod';
import { AMOUNT_RULE, DECIMAL_TEXT, isWithinAmountBound } from '../commands/amount.ts';

import { text, uuid } from '../commands/field-schemas.ts';

export { text, uuid };

const decimalDigits = (value: unknown) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value);
const notDecimal = (issue: { code?: string }) => (issue.code === 'invalid_type' ? 'must be a whole number in decimal digits' : undefined);

/**
 * A whole number in a query string, in plain decimal digits: coercing with Number() would also take "0x10",
 * "1e1", " 5 " and an empty value (as 0).
 */
export const queryInteger = ({ min, max, fallback }: { min: number; max?: number; fallback: number }) => {
  const integer = z.number({ error: notDecimal }).int().min(min);
  return z.preprocess(decimalDigits, (max === undefined ? integer : integer.max(max)).default(fallback));
};

export const idParams = z.object({ id: uuid });

export const standardHeaders = z.object({
  authorization: z.string().describe('Bearer <JWT>'),
  'x-tenant-id': uuid.describe('Tenant the token is linked to'),
  'x-org-id': uuid.describe('Organization the token is linked to'),
});

export const errorBody = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })),
    }),
  })
  .meta({ id: 'Error' });

export const errorResponses = { 400: errorBody, 401: errorBody, 403: errorBody, 404: errorBody, 409: errorBody, 503: errorBody };

export const timestamp = z.iso.datetime();

/** An amount (commands/amount.ts) as an exact decimal string with at least two places: 19.99 → "19.99", 5 → "5.00". */
export const decimalAmount = z
  .union([z.number().finite(), z.string().regex(DECIMAL_TEXT, 'must be a decimal number')])
  .transform((value, ctx) => {
    const amount = new Decimal(typeof value === 'number' ? String(value) : value);
    if (!isWithinAmountBound(amount)) {
      ctx.addIssue({ code: 'custom', message: AMOUNT_RULE });
      return z.NEVER;
    }
    return amount.toFixed(Math.max(2, amount.decimalPlaces()));
  });

export const currencyCode = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'must be an ISO 4217 code')
  .transform((code) => code.toUpperCase());
