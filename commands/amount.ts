import { Decimal } from 'decimal.js';

/**
 * Every amount a command carries (a variant's price, an order's unit prices and charges, a feed's shipping rate):
 * 0 ≤ amount < 10^12 with at most 6 decimal places. The edge's schemas, the deciders and the order mapping all ask
 * this module, so that what one accepts the others accept.
 */
export const MAX_AMOUNT = '1e12';
export const AMOUNT_PLACES = 6;

/** What an amount out of bounds is told, wherever it is refused. */
export const AMOUNT_RULE = `must be between 0 and 10^12 with at most ${AMOUNT_PLACES} decimal places`;

/** Digits with an optional fraction: no sign, exponent, spaces or hexadecimal. */
export const DECIMAL_TEXT = /^\d+(\.\d+)?$/;

/** Whether a decimal lies within the amount bound. */
export const isWithinAmountBound = (value: Decimal): boolean =>
  !value.isNegative() && value.lt(MAX_AMOUNT) && value.decimalPlaces() <= AMOUNT_PLACES;

const AMOUNT_TEXT = new RegExp(`^\\d+(\\.\\d{1,${AMOUNT_PLACES}})?$`);

/**
 * Whether `text` is an amount as a command carries it: exact decimal text (e.g. "19.99", "5") within the bound, with no
 * more than AMOUNT_PLACES fraction digits written (the edge writes every amount that way).
 */
export const isAmount = (text: string): boolean => AMOUNT_TEXT.test(text) && isWithinAmountBound(new Decimal(text));
