import { Decimal } from 'decimal.js';

/** Order money in decimal, never binary floating point; every amount is an exact decimal string. */
export const amount = (value: Decimal.Value): string => {
  const d = new Decimal(value);
  return d.toFixed(Math.max(2, d.decimalPlaces()));
};

export type Totals = { subtotal: string; discountTotal: string; shippingTotal: string; taxTotal: string; total: string };

export function orderTotals(
  lines: { quantity: number; unitPrice: string }[],
  charges: { discountTotal: string; shippingTotal: string; taxTotal: string },
): Totals & { lineTotals: string[] } {
  const lineTotals = lines.map((line) => new Decimal(line.unitPrice).times(line.quantity));
  const subtotal = lineTotals.reduce((sum, line) => sum.plus(line), new Decimal(0));
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
