import type { Projection } from '../ledger/projection.ts';
import { auditProjection } from './audit/audit-projection.ts';
import { bulkProjection } from './bulk/bulk-projection.ts';
import { catalogProjection } from './catalog/catalog-projection.ts';
import { exportProjection } from './export/export-projection.ts';
import { connectionsProjection } from './integrations/connections-projection.ts';
import { inboundProjection } from './integrations/inbound-projection.ts';
import { pushProjection } from './integrations/push-projection.ts';
import { webhookSecretsProjection } from './integrations/webhook-secrets-projection.ts';
import { omsProjection } from './oms/oms-projection.ts';
import { validationProjection } from './validation/validation-projection.ts';
import { feedProjection } from './feed/feed-projection.ts';
import { checkoutProjection } from './checkout/checkout-projection.ts';

export const projections: Projection[] = [
  catalogProjection,
  auditProjection,
  validationProjection,
  omsProjection,
  connectionsProjection,
  pushProjection,
  inboundProjection,
  webhookSecretsProjection,
  bulkProjection,
  exportProjection,
  feedProjection,
  checkoutProjection,
];

export const projectionNamed = (name: string): Projection | undefined => projections.find((p) => p.name === name);
