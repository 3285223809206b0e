import type { Projection } from '../ledger/projection.ts';
import { auditProjection } from './audit/audit-projection.ts';
import { catalogProjection } from './catalog/catalog-projection.ts';

export const projections: Projection[] = [catalogProjection, auditProjection];

export const projectionNamed = (name: string): Projection | undefined => projections.find((p) => p.name === name);
