/**
 * What the service asks of the connection provider (a Unified.to-style unified API). `unified-client.ts` speaks it over
 * HTTP; the stand-in in stack/unified speaks the provider's side for tests and development.
 */

/** A price as the provider's `CommerceItemPrice`. */
export type ItemPrice = { price: number; currency?: string; compare_at_price?: number };

/** Our reference on the platform, as a metadata entry the provider can be searched by (see `findItemByReference`). */
export type ReferenceMetadata = { slug: string; value: string };

/**
 * A commerce item as the provider's `CommerceItem` takes it (the fields we write): no variants inside, they are
 * `itemvariant`s of their own. Absent rather than null: the provider's schema has no nulls.
 */
export type CommerceItem = {
  name: string;
  description?: string;
  is_active: boolean;
  vendor_name?: string;
  tags?: string[];
  metadata?: ReferenceMetadata[];
  media?: { url: string; alt?: string; position: number }[];
  prices?: ItemPrice[];
};

/** A variant as the provider's `CommerceItemvariant` takes it; `items` names the item it belongs to. */
export type CommerceItemVariant = {
  name?: string;
  sku?: string;
  is_active: boolean;
  metadata?: ReferenceMetadata[];
  prices?: ItemPrice[];
  items?: { id: string }[];
};

/** An item as the provider answers it: what we wrote plus its own id. */
export type RemoteItem = CommerceItem & { id: string };
export type RemoteItemVariant = CommerceItemVariant & { id: string };

export type ProviderConnection = { id: string; integration_type: string; categories?: string[] };

/** `POST /unified/webhook`'s body: a subscription of a connection to one object type's event. */
export type WebhookRequest = { connection_id: string; hook_url: string; object_type: string; event: string };
/** The provider's `Webhook` as answered (the fields we read). */
export type WebhookSubscription = WebhookRequest & { id: string };

/**
 * Why a call failed. `rate_limited`: 429 (retryAfterMs from Retry-After when given); `server`: 5xx; `timeout` and
 * `network`: no answer; `auth`: 401/403 (the connection is revoked); `not_found`: 404; `rejected`: any other 4xx.
 */
export type ProviderFailureKind = 'rate_limited' | 'server' | 'timeout' | 'network' | 'auth' | 'not_found' | 'rejected';

export class ProviderError extends Error {
  readonly kind: ProviderFailureKind;
  readonly status?: number;
  readonly retryAfterMs?: number;

  constructor(kind: ProviderFailureKind, message: string, status?: number, retryAfterMs?: number) {
    super(message);
    this.kind = kind;
    this.status = status;
    this.retryAfterMs = retryAfterMs;

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
  /**
   * `GET {url}/unified/integration/auth/{workspace_id}/{integration_type}?redirect=true&…`: where the tenant's browser
   * goes (no call made); `redirect=true` makes the provider answer the browser with a redirect to the platform's consent.
   */
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
  /** `POST /commerce/{id}/itemvariant`, with the item named in `items`. */
  createItemVariant(connectionId: string, variant: CommerceItemVariant): Promise<RemoteItemVariant>;
  updateItemVariant(connectionId: string, variantId: string, variant: CommerceItemVariant): Promise<RemoteItemVariant>;
  /** Resolves also when the variant is already gone (404). */
  deleteItemVariant(connectionId: string, variantId: string): Promise<void>;
  /** `GET /commerce/{id}/itemvariant?item_id=`: every variant of the item (paged through). */
  listItemVariants(connectionId: string, itemId: string): Promise<RemoteItemVariant[]>;
  /** `POST /unified/webhook`. */
  createWebhook(subscription: WebhookRequest): Promise<WebhookSubscription>;
  /** `GET /unified/webhook?connection_id=`. */
  listWebhooks(connectionId: string): Promise<WebhookSubscription[]>;
}

/** The metadata slug under which every pushed item carries our product reference. */
export const REFERENCE_SLUG = 'commerce_ledger_ref';
