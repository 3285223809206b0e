/**
 * GTIN-8, -12 (UPC-A), -13 (EAN) and -14: all digits, and the last one is the GS1 check digit — weights 3 and 1
 * alternate from the digit next to the check digit leftwards, and the check digit tops the sum up to a multiple of 10.
 */
export const GTIN_LENGTHS = [8, 12, 13, 14] as const;

export const gtinCheckDigit = (body: string): number => {
  let sum = 0;
  for (let i = 0; i < body.length; i++) sum += Number(body[body.length - 1 - i]) * (i % 2 === 0 ? 3 : 1);
  return (10 - (sum % 10)) % 10;
};

export const isValidGtin = (code: string): boolean =>
  /^\d+$/.test(code) &&
  (GTIN_LENGTHS as readonly number[]).includes(code.length) &&
  gtinCheckDigit(code.slice(0, -1)) === Number(code.at(-1));
