import { followedBy, type SomeAggregate } from '../ledger/aggregate.ts';
import { bulkJobAggregate } from './bulk/bulk-job.ts';
import { catalogExportAggregate } from './export/catalog-export.ts';
import { brandAggregate } from './catalog/brand.ts';
import { productAggregate } from './catalog/product.ts';
import { taxonomyAggregate } from './catalog/taxonomy.ts';
import { connectionAggregate } from './integrations/connection.ts';
import { inventoryAggregate } from './oms/inventory.ts';
import { orderAggregate } from './oms/order.ts';
import { inboxAggregate } from './integrations/inbox.ts';
import { inboundDeadLetterAggregate } from './integrations/inbound-dead-letter.ts';
import { itemPushAggregate } from './integrations/item-push.ts';
import { productPushAggregate } from './integrations/product-push.ts';
import { webhookSecretAggregate } from './integrations/webhook-secret.ts';
import { deadLettersOf, pushDeadLetterAggregate } from './integrations/push-dead-letter.ts';
import { assessmentsOf, productQualityAggregate } from './quality/product-quality.ts';
import { skuUsageAggregate } from './quality/sku-usage.ts';
import { catalogFeedAggregate } from './ucp/catalog-feed.ts';
import { checkoutSessionAggregate } from './acp/checkout-session.ts';
import { agentCheckoutAggregate } from './acp/agent-checkout.ts';

/** Every aggregate type, each run by its own single writer; this order is the event catalog's (docs/asyncapi.json). */
export const aggregates: readonly SomeAggregate[] = [
  // A product's own quality is decided in the same transaction as the change it judges (both keyed by the product).
  followedBy(productAggregate, productQualityAggregate, assessmentsOf),
  taxonomyAggregate,
  brandAggregate,
  productQualityAggregate,
  skuUsageAggregate,
  orderAggregate,
  inventoryAggregate,
  connectionAggregate,
  productPushAggregate,
  // A push that cannot succeed is filed in the dead-letter topic in the same transaction as the failure that ends it.
  followedBy(itemPushAggregate, pushDeadLetterAggregate, deadLettersOf),
  pushDeadLetterAggregate,
  inboxAggregate,
  inboundDeadLetterAggregate,
  webhookSecretAggregate,
  bulkJobAggregate,
  catalogExportAggregate,
  catalogFeedAggregate,
  checkoutSessionAggregate,
  agentCheckoutAggregate,
];
