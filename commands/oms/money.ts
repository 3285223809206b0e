import { Decimal } from 'decimal.js';

/**
 * Enough significant digits for every sum of bounded amounts: decimal.js rounds to 20 by default, which
 * drops the cents of a line like 999 999 × 999 999 999 999.99.
 */
const Exact = Decimal.clone({ precision: 40 });

/**
 * Unit prices and charges are amounts (commands/amount.ts). Line totals, subtotal and total: below 10^15, so every
 * amount of an order fits `numeric(21, 6)` wherever a consumer keeps it (the read model keeps the exact text).
 */
export const MAX_TOTAL = '1e15';

/** Whether a computed amount stays below the total limit. */
export const isWithinTotalLimit = (value: string): boolean => new Exact(value).lt(MAX_TOTAL);

/** Order money in decimal, never binary floating point; every amount is an exact decimal string. */
export const amount = (value: Decimal.Value): string => {
  const d = new Exact(value);
  return d.toFixed(Math.max(2, d.decimalPlaces()));
};

export type Totals = { subtotal: string; discountTotal: string; shippingTotal: string; taxTotal: string; total: string };

export function orderTotals(
  lines: { quantity: number; unitPrice: string }[],
  charges: { discountTotal: string; shippingTotal: string; taxTotal: string },
): Totals & { lineTotals: string[] } {
  const lineTotals = lines.map((line) => new Exact(line.unitPrice).times(line.quantity));
  const subtotal = lineTotals.reduce((sum, line) => sum.plus(line), new Exact(0));
  const total = subtotal.minus(charges.discountTotal).plus(charges.shippingTotal).plus(charges.taxTotal);
  return {
    lineTotals: lineTotals.map(amount),
    subtotal: amount(subtotal),
    discountTotal: amount(charges.discountTotal),
    shippingTotal: amount(charges.shippingTotal),
    taxTotal: amount(charges.taxTotal),
    total: amount(total),
  };
}
