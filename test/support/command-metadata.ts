import type { CommandMetadata } from '../../ledger/message.ts';

/** Metadata for decider tests: `issuedAt` stays fixed; the quality deciders also read the tenant and org (issue ids). */
export const metadata: CommandMetadata = {
  commandId: 'c1',
  tenantId: 't1',
  orgId: 'o1',
  actor: { userId: 'u1', email: 'a@example.com', ip: '127.0.0.1' },
  issuedAt: 1_700_000_000_000,
  correlationId: 'r1',
};
