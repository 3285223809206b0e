import { randomUUID } from 'node:crypto';
import { cartProblems, cartTotals, type Cart } from '../../commands/acp/checkout-cart.ts';
import { FakeLedger, type SentCommand } from './fake-ledger.ts';

/** One tenant's sellable cup (12.50 EUR, 4 in stock at one location), as the checkout routes' unit tests sell it. */
export function checkoutRouteCatalog(at: Date) {
  const [tenantId, orgId, otherTenant] = [randomUUID(), randomUUID(), randomUUID()];
  const [productId, variantId, locationId] = [randomUUID(), randomUUID(), randomUUID()];
  const ledger = () =>
    new FakeLedger({
      products: [{ id: productId, tenant_id: tenantId, org_id: orgId, title: 'Espresso cup', status: 'ACTIVE' }],
      variants: [
        {
          id: variantId,
          product_id: productId,
          tenant_id: tenantId,
          org_id: orgId,
          sku: 'CUP',
          barcode: null,
          price: '12.50',
          currency: 'EUR',
          created_at: at,
        },
      ],
      stock_levels: [
        { tenant_id: tenantId, org_id: orgId, variant_id: variantId, location_id: locationId, available: 4, reserved: 0, updated_at: at },
      ],
      validation_issues: [],
      catalog_feeds: [],
      webhook_secrets: [],
    });

  /** The checkout read model's row for an OpenCheckoutSession the writer accepted. */
  const opened = (command: SentCommand) => {
    const { sessionId, ...cart } = command.data as { sessionId: string } & Cart;
    const { subtotal, shippingTotal, total } = cartTotals(cart);
    const status = cartProblems(cart).length === 0 ? 'ready_for_payment' : 'not_ready_for_payment';
    const row = { id: sessionId, tenant_id: command.tenantId, org_id: command.orgId, status, currency: cart.currency, cart, subtotal };
    const rest = { shipping_total: shippingTotal, total, order_id: null, attempt: 0, last_failure: null, created_at: at, updated_at: at };
    return { rows: { checkout_sessions: [{ ...row, ...rest }] } };
  };

  return { tenantId, orgId, otherTenant, productId, variantId, locationId, ledger, opened };
}
