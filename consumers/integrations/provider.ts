/**
 * What the service asks of the connection provider (a Unified.to-style unified API). `unified-client.ts` speaks it over
 * HTTP; the stand-in in stack/unified speaks the provider's side for tests and development.
 */

/** A commerce item as the provider takes it (the fields we write). */
export type CommerceItem = {
  name: string;
  description?: string | null;
  is_active: boolean;
  vendor_name?: string | null;
  tags?: string[];
  /** Our reference to the product, as a metadata entry the provider can be searched by (see `findItemByReference`). */
  metadata?: { slug: string; value: string }[];
  media?: { url: string; alt?: string | null; position: number }[];
  variants?: { sku?: string | null; prices?: { price: number; currency?: string | null }[] }[];
};

/** An item as the provider answers it: what we wrote plus its own id. */
export type RemoteItem = CommerceItem & { id: string };

export type ProviderConnection = { id: string; integration_type: string; categories?: string[] };

export type WebhookSubscription = { id: string; connection_id: string; hook_url: string; object_type: string; event: string };

/**
 * Why a call failed. `rate_limited`: 429 (retryAfterMs from Retry-After when given); `server`: 5xx; `timeout` and
 * `network`: no answer; `auth`: 401/403 (the connection is revoked); `not_found`: 404; `rejected`: any other 4xx.
 */
export type ProviderFailureKind = 'rate_limited' | 'server' | 'timeout' | 'network' | 'auth' | 'not_found' | 'rejected';

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderFailureKind,
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }

  /** Worth another attempt later: throttling, a server fault or no answer at all. */
  get retryable(): boolean {
    return this.kind === 'rate_limited' || this.kind === 'server' || this.kind === 'timeout' || this.kind === 'network';
  }
}

export type AuthUrlRequest = {
  workspaceId: string;
  integrationType: string;
  successRedirect: string;
  failureRedirect: string;
  state: string;
  scopes?: string[];
  env?: string;
};

export interface ConnectionProvider {
  /** `GET {url}/unified/integration/auth/{workspace_id}/{integration_type}?…`: where the tenant's browser goes (no call made). */
  authUrl(request: AuthUrlRequest): string;
  /** `GET /unified/connection/{id}`; undefined when the provider does not know it (404). */
  getConnection(connectionId: string): Promise<ProviderConnection | undefined>;
  createItem(connectionId: string, item: CommerceItem): Promise<RemoteItem>;
  updateItem(connectionId: string, itemId: string, item: CommerceItem): Promise<RemoteItem>;
  /** Resolves also when the item is already gone (404): the outcome wanted is reached. */
  deleteItem(connectionId: string, itemId: string): Promise<void>;
  getItem(connectionId: string, itemId: string): Promise<RemoteItem | undefined>;
  /** The item carrying our reference in its metadata, if one exists (`GET /commerce/{id}/item?query=<reference>`). */
  findItemByReference(connectionId: string, reference: string): Promise<RemoteItem | undefined>;
  /** `POST /unified/webhook`. */
  createWebhook(subscription: Omit<WebhookSubscription, 'id'>): Promise<WebhookSubscription>;
  /** `GET /unified/webhook?connection_id=`. */
  listWebhooks(connectionId: string): Promise<WebhookSubscription[]>;
}

/** The metadata slug under which every pushed item carries our product reference. */
export const REFERENCE_SLUG = 'commerce_ledger_ref';
