import { cartProblems, cartTotals, exactMinorUnits, type Cart } from '../commands/acp/checkout-cart.ts';
import type { CatalogFeedSettings } from '../commands/ucp/feed-settings.ts';
import type { CheckoutSessionRow } from '../projections/checkout/checkout-queries.ts';
import type { CheckoutSessionBody } from './acp-schemas.ts';
import { ACP_API_VERSIONS } from './acp-edge.ts';

/** A session row as ACP's `CheckoutSession`: amounts in minor units, the lowercase currency of the protocol's examples. */
const minor = (amount: string, currency: string): number => {
  const units = exactMinorUnits(amount, currency);
  // The edge prices only variants whose price is exact in minor units, so totals of them are too.
  if (units === undefined) throw new Error(`${amount} ${currency} is not exact in minor units`);
  return units;
};

const policyLinks = (settings: CatalogFeedSettings | null): CheckoutSessionBody['links'] =>
  (
    [
      ['terms_of_use', settings?.termsOfServiceUrl],
      ['privacy_policy', settings?.privacyPolicyUrl],
      ['return_policy', settings?.returnPolicyUrl],
    ] as const
  ).flatMap(([type, url]) => (url ? [{ type, url }] : []));

const total = (type: string, display_text: string, amount: number) => ({ type, display_text, amount });

export function acpSessionBody(
  row: CheckoutSessionRow,
  settings: CatalogFeedSettings | null,
  orderUrl: (orderId: string) => string,
): CheckoutSessionBody {
  const cart: Cart = row.cart;
  const { currency } = cart;
  const { lineTotals, subtotal, shippingTotal, total: grand } = cartTotals(cart);
  const line_items = cart.lines.map((line, index) => {
    const lineTotal = minor(lineTotals[index] ?? '0', currency);
    return {
      id: `li_${line.itemId}`,
      item: { id: line.itemId },
      quantity: line.quantity,
      name: line.name,
      unit_amount: minor(line.unitPrice, currency),
      product_id: line.productId,
      variant_id: line.itemId,
      ...(line.sku ? { sku: line.sku } : {}),
      availability_status: line.quantity <= line.available ? ('in_stock' as const) : ('out_of_stock' as const),
      available_quantity: line.available,
      totals: [
        total('items_base_amount', 'Item(s)', lineTotal),
        total('subtotal', 'Subtotal', lineTotal),
        total('total', 'Total', lineTotal),
      ],
    };
  });
  const selected = cart.shippingOptions.find((option) => option.id === cart.selectedOptionId);
  const open = row.status === 'not_ready_for_payment' || row.status === 'ready_for_payment';
  return {
    id: row.id,
    protocol: { version: ACP_API_VERSIONS[0] },
    capabilities: {},
    status: row.status,
    currency: currency.toLowerCase(),
    line_items,
    ...(cart.buyer ? { buyer: JSON.parse(cart.buyer) as Record<string, unknown> } : {}),
    ...(cart.fulfillmentDetails ? { fulfillment_details: JSON.parse(cart.fulfillmentDetails) as Record<string, unknown> } : {}),
    fulfillment_options: cart.shippingOptions.map((option) => ({
      type: 'shipping' as const,
      id: option.id,
      title: option.title,
      totals: [total('total', 'Shipping', minor(option.price, currency))],
    })),
    ...(selected
      ? { selected_fulfillment_options: [{ type: 'shipping', option_id: selected.id, item_ids: cart.lines.map((line) => line.itemId) }] }
      : {}),
    totals: [
      total('items_base_amount', 'Item(s) total', minor(subtotal, currency)),
      total('subtotal', 'Subtotal', minor(subtotal, currency)),
      total('fulfillment', 'Shipping', minor(shippingTotal, currency)),
      total('total', 'Total', minor(grand, currency)),
    ],
    // What stops payment matters only while the session can still be paid for.
    messages: open
      ? cartProblems(cart).map(({ code, param, content }) => ({
          type: 'error' as const,
          code,
          severity: 'high',
          resolution: 'requires_buyer_input',
          param,
          content_type: 'plain' as const,
          content,
        }))
      : [],
    links: policyLinks(settings),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...(row.status === 'completed' && row.order_id
      ? {
          order: {
            type: 'order' as const,
            id: row.order_id,
            checkout_session_id: row.id,
            permalink_url: orderUrl(row.order_id),
            status: 'confirmed',
          },
        }
      : {}),
  };
}
