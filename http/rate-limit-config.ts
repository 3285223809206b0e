import { z } from 'zod';
import { defineSettings } from '../ledger/config.ts';

const budget = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/**
 * The edge's rate limits and per-tenant admission (docs/decisions.md, "Rate limits and fairness"). Each budget is per
 * instance, over a fixed window of RATE_LIMIT_WINDOW_SECONDS; a bulk job's items count as the writes they are.
 */
export const rateLimitSettings = defineSettings({
  RATE_LIMIT_WINDOW_SECONDS: budget(60),
  /** Requests of one tenant (every authenticated route, reads and writes alike). */
  RATE_LIMIT_TENANT_REQUESTS: budget(30_000),
  /** Writes of one tenant: a POST, PUT or DELETE is one, a bulk job one per item. */
  RATE_LIMIT_TENANT_WRITES: budget(120_000),
  /** The same two budgets for one organization of a tenant. */
  RATE_LIMIT_ORG_REQUESTS: budget(30_000),
  RATE_LIMIT_ORG_WRITES: budget(120_000),
  /**
   * Requests of one tenant in progress at once when no other tenant is busy; with others busy, this divided by the
   * number of busy tenants plus one (at least one): a share stays free. The next ones wait their turn at the edge.
   */
  RATE_LIMIT_TENANT_IN_FLIGHT: budget(4),
  /** How long after its last answer a tenant still counts as busy (and so still has its part of the in-flight budget). */
  RATE_LIMIT_TENANT_BUSY_MS: budget(1_000),
  /** Requests of one tenant waiting for one of those slots; one more is answered 429 at once. */
  RATE_LIMIT_TENANT_QUEUED: budget(256),
  /** How long a request may wait for a slot; past it, 429 with Retry-After rather than an answer the client gave up on. */
  RATE_LIMIT_TENANT_WAIT_MS: budget(10_000),
  /** Verified deliveries of one connection to POST /unified/webhook. */
  RATE_LIMIT_WEBHOOK_CONNECTION: budget(60_000),
  /** Deliveries to POST /unified/webhook from one source address that are not verified (no or a wrong signature). */
  RATE_LIMIT_WEBHOOK_ADDRESS: budget(600),
  /** Requests from one source address to the public routes that read the database: the tenants' UCP profiles. */
  RATE_LIMIT_PUBLIC_ADDRESS: budget(6_000),
});
