import objectTypes from './webhook-object-types.json' with { type: 'json' };

/**
 * What the stand-in takes from Unified.to's published contract (its SDK, `@unified-api/typescript-sdk`, generated from
 * its OpenAPI): the fields it keeps of an item and an item variant (any other is dropped, as the real API drops what
 * its model does not have), the webhook object types and events it accepts. `test/unit/unified-published-shapes.unit.spec.ts`
 * holds these lists to the SDK's own.
 */

export const ITEM_FIELDS = [
  'account_id',
  'collections',
  'description',
  'duration',
  'global_code',
  'inventory_id',
  'is_active',
  'is_featured',
  'is_taxable',
  'is_visible',
  'location_id',
  'media',
  'metadata',
  'name',
  'prices',
  'public_description',
  'public_name',
  'raw',
  'requires_shipping',
  'slug',
  'tags',
  'taxrate_id',
  'total_stock',
  'type',
  'vendor_name',
  'weight',
  'weight_unit',
] as const;

export const VARIANT_FIELDS = [
  'available_at',
  'description',
  'height',
  'inventory_id',
  'is_active',
  'is_featured',
  'is_visible',
  'items',
  'length',
  'media',
  'metadata',
  'name',
  'options',
  'prices',
  'public_description',
  'public_name',
  'raw',
  'requires_shipping',
  'size_unit',
  'sku',
  'tags',
  'total_stock',
  'weight',
  'weight_unit',
  'width',
] as const;

/** The SDK's `WebhookObjectType` (a copy: see webhook-object-types.json for its source). */
export const WEBHOOK_OBJECT_TYPES: readonly string[] = objectTypes.values;
export const WEBHOOK_EVENTS = ['created', 'updated', 'deleted'] as const;

/** The provider operations the stand-in serves, by the SDK's names for them. */
export type Operation =
  | 'getUnifiedIntegrationAuth'
  | 'getUnifiedConnection'
  | 'createCommerceItem'
  | 'listCommerceItems'
  | 'getCommerceItem'
  | 'updateCommerceItem'
  | 'patchCommerceItem'
  | 'removeCommerceItem'
  | 'createCommerceItemvariant'
  | 'listCommerceItemvariants'
  | 'getCommerceItemvariant'
  | 'updateCommerceItemvariant'
  | 'patchCommerceItemvariant'
  | 'removeCommerceItemvariant'
  | 'createUnifiedWebhook'
  | 'listUnifiedWebhooks'
  | 'removeUnifiedWebhook'
  | 'nativeDelivery';

/**
 * One exchange the stand-in saw: a request it took (query and JSON body), an answer it gave (status and body), or a
 * native delivery it sent (the body it posted).
 */
export type Exchange =
  | { kind: 'request'; operation: Operation; query: URLSearchParams; body: unknown }
  | { kind: 'answer'; operation: Operation; status: number; body: unknown }
  | { kind: 'delivery'; operation: 'nativeDelivery'; body: unknown };

export type ContractCheck = (exchange: Exchange) => void;

/** The named fields of a JSON object that it has. */
export const pick = (body: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(fields.filter((key) => key in body).map((key) => [key, body[key]]));
