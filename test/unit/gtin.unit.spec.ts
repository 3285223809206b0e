import { describe, expect, it } from 'vitest';
import { gtinCheckDigit, isValidGtin } from '../../commands/quality/gtin.ts';

/** Real-world codes with their correct check digit, one per GTIN length. */
const valid = {
  'GTIN-8 (EAN-8)': '96385074',
  'GTIN-12 (UPC-A)': '036000291452',
  'GTIN-13 (EAN-13)': '4006381333931',
  'GTIN-14': '10012345678902',
};

describe('GTIN check digits', () => {
  it.each(Object.entries(valid))('accepts a %s with a correct check digit', (_, code) => {
    expect(isValidGtin(code)).toBe(true);
    expect(gtinCheckDigit(code.slice(0, -1))).toBe(Number(code.at(-1)));
  });

  it.each(Object.entries(valid))('refuses a %s whose check digit is off by one', (_, code) => {
    const wrong = code.slice(0, -1) + String((Number(code.at(-1)) + 1) % 10);
    expect(isValidGtin(wrong)).toBe(false);
  });

  it('refuses other lengths, non-digits and empty codes', () => {
    for (const code of ['', '1234567', '12345678901', '123456789012345', '40063813339a1', ' 4006381333931', '4006-381333931']) {
      expect(isValidGtin(code), code).toBe(false);
    }
  });
});
