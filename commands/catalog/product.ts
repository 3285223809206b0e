import { defineAggregate } from '../../ledger/aggregate.ts';
import { AMOUNT_RULE, isAmount } from '../amount.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';

// ── Events ──────────────────────────────────────────────────────────────────
export type ProductStatus = 'ACTIVE' | 'DRAFT';
export const productStatuses: readonly ProductStatus[] = ['ACTIVE', 'DRAFT'];
export type ProductField = 'title' | 'description' | 'category' | 'sku' | 'brand' | 'templateId' | 'status';
export const productFields: ProductField[] = ['title', 'description', 'category', 'sku', 'brand', 'templateId', 'status'];
/** The optional text fields a product may carry beside its title. */
export type ProductExtras = { sku: string | null; brand: string | null; templateId: string | null };
export type FieldChange = { field: ProductField; previous: string | null; current: string | null };
/** Attribute values, keyed by attribute id (docs/decisions.md); every value is non-blank text. */
export type AttributeValues = Record<string, string>;
export type AttributeChange = { attributeId: string; previous: string | null; current: string | null };

/** The attributes the linked template requires, as the template said when linked (templates never change). */
type TemplateRequirements = { templateRequiredAttributeIds?: string[] | null };
export type ProductCreated = Event<
  'ProductCreated',
  // Events written before sku, brand, templateId and attributes existed lack them: absent means null (attributes: none).
  {
    productId: string;
    title: string;
    description: string | null;
    category: string | null;
    status: ProductStatus;
  } & Partial<ProductExtras> & {
      attributes?: AttributeValues;
    } & TemplateRequirements
>;
/** attributeChanges is absent in events written before products carried attribute values. */
/** `templateRequiredAttributeIds` comes with a change of templateId to a template. */
export type ProductUpdated = Event<
  'ProductUpdated',
  { productId: string; changes: FieldChange[]; attributeChanges?: AttributeChange[] } & TemplateRequirements
>;
export type ProductDeleted = Event<'ProductDeleted', { productId: string; variantIds: string[] }>;
export type VariantAdded = Event<
  'VariantAdded',
  {
    productId: string;
    variantId: string;
    sku: string | null;
    barcode: string | null;
    /** Exact decimal string, e.g. "19.99"; never a binary float. */
    price: string | null;
    currency: string | null;
  }
>;

export type MediaAdded = Event<
  'MediaAdded',
  { productId: string; mediaId: string; variantId: string | null; url: string; altText: string | null; sortOrder: number }
>;

export type ProductEvent = ProductCreated | ProductUpdated | ProductDeleted | VariantAdded | MediaAdded;

const productEventTypes: ReadonlySet<string> = new Set<ProductEvent['type']>([
  'ProductCreated',
  'ProductUpdated',
  'ProductDeleted',
  'VariantAdded',
  'MediaAdded',
]);
/** Whether an event of a topic set carrying several aggregates' events is one of a product's. */
export const isProductEvent = <E extends Event>(event: E): event is E & ProductEvent => productEventTypes.has(event.type);

// ── State ───────────────────────────────────────────────────────────────────
export type Product =
  | { status: 'Empty' }
  | ({
      status: 'Existing';
      title: string;
      description: string | null;
      category: string | null;
      /** ACTIVE or DRAFT (`status` is the aggregate's lifecycle); snapshots from before DRAFT existed lack it: ACTIVE. */
      productStatus: ProductStatus;
      variantIds: string[];
      mediaIds: string[];
      attributes: AttributeValues;
    } & ProductExtras)
  | { status: 'Deleted' };

export const initialState = (): Product => ({ status: 'Empty' });

/** The values after the changes: a null current removes the attribute's value. */
export const applyAttributeChanges = (values: AttributeValues, changes: AttributeChange[]): AttributeValues => {
  const next = { ...values };
  for (const { attributeId, current } of changes) {
    if (current === null) delete next[attributeId];
    else next[attributeId] = current;
  }
  return next;
};

export const evolve = (state: Product, event: ProductEvent): Product => {
  switch (event.type) {
    case 'ProductCreated': {
      const { title, description, category, sku = null, brand = null, templateId = null, attributes = {} } = event.data;
      const productStatus = event.data.status;
      return {
        status: 'Existing',
        title,
        description,
        category,
        productStatus,
        sku,
        brand,
        templateId,
        attributes,
        variantIds: [],
        mediaIds: [],
      };
    }
    case 'ProductUpdated': {
      if (state.status !== 'Existing') return state;
      const next = { ...state };
      for (const change of event.data.changes) {
        if (change.field === 'title') next.title = change.current ?? next.title;
        else if (change.field === 'status') next.productStatus = change.current === 'DRAFT' ? 'DRAFT' : 'ACTIVE';
        else next[change.field] = change.current;
      }
      next.attributes = applyAttributeChanges(next.attributes ?? {}, event.data.attributeChanges ?? []);
      return next;
    }
    case 'ProductDeleted':
      return { status: 'Deleted' };
    case 'VariantAdded':
      if (state.status !== 'Existing') return state;
      return { ...state, variantIds: [...state.variantIds, event.data.variantId] };
    case 'MediaAdded':
      if (state.status !== 'Existing') return state;
      return { ...state, mediaIds: [...state.mediaIds, event.data.mediaId] };
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
export type CreateProduct = Command<
  'CreateProduct',
  {
    productId: string;
    title: string;
    description: string | null;
    category: string | null;
    attributes?: AttributeValues;
  } & Partial<ProductExtras> &
    TemplateRequirements
>;
/**
 * Absent fields stay as they are; `null` clears an optional field. `attributes` sets the values it names
 * and leaves the others; a `null` value removes that attribute's value. `status` moves the product between
 * ACTIVE and DRAFT, either way (docs/decisions.md, "Product status").
 */
export type UpdateProduct = Command<
  'UpdateProduct',
  {
    productId: string;
    title?: string;
    status?: ProductStatus;
    description?: string | null;
    category?: string | null;
    attributes?: Record<string, string | null>;
  } & Partial<ProductExtras> &
    TemplateRequirements
>;
export type DeleteProduct = Command<'DeleteProduct', { productId: string }>;
export type AddVariant = Command<'AddVariant', VariantAdded['data']>;
export type AddMedia = Command<'AddMedia', MediaAdded['data']>;

export type ProductCommand = CreateProduct | UpdateProduct | DeleteProduct | AddVariant | AddMedia;

// ── Decide ──────────────────────────────────────────────────────────────────
/** Media sort order: an Avro int and an integer column; the edge's schema takes its bound from here. */
export const MAX_SORT_ORDER = 1_000_000;

const notFound = (productId: string) => new NotFoundError(`product ${productId} not found`);

const existing = (state: Product, productId: string) => {
  if (state.status !== 'Existing') throw notFound(productId);
  return state;
};

const create = ({ data }: CreateProduct, state: Product): ProductEvent[] => {
  if (state.status !== 'Empty') throw new ConflictError(`product ${data.productId} already exists`);
  return [{ type: 'ProductCreated', data: { ...data, status: 'ACTIVE' } }];
};

const valueOf = (product: Extract<Product, { status: 'Existing' }>, field: ProductField): string | null =>
  field === 'status' ? (product.productStatus ?? 'ACTIVE') : product[field];

const update = ({ data }: UpdateProduct, state: Product): ProductEvent[] => {
  const product = existing(state, data.productId);
  if (data.status !== undefined && !productStatuses.includes(data.status)) {
    throw new ValidationError('the status is not one of ACTIVE, DRAFT', [{ path: 'body.status', message: 'must be ACTIVE or DRAFT' }]);
  }
  const changes = productFields.flatMap((field): FieldChange[] => {
    const requested = data[field];
    const previous = valueOf(product, field);
    if (requested === undefined || requested === previous) return [];
    return [{ field, previous, current: requested }];
  });
  const attributeChanges = Object.entries(data.attributes ?? {}).flatMap(([attributeId, current]): AttributeChange[] => {
    // Snapshots taken before products carried attribute values lack them.
    const previous = (product.attributes ?? {})[attributeId] ?? null;
    return current === previous ? [] : [{ attributeId, previous, current }];
  });
  // An update that changes nothing records nothing, so updated_at only moves on a real change.
  if (changes.length === 0 && attributeChanges.length === 0) return [];
  const linked = changes.some((c) => c.field === 'templateId' && c.current !== null);
  const extras = {
    ...(attributeChanges.length > 0 ? { attributeChanges } : {}),
    ...(linked ? { templateRequiredAttributeIds: data.templateRequiredAttributeIds ?? null } : {}),
  };
  return [{ type: 'ProductUpdated', data: { productId: data.productId, changes, ...extras } }];
};

const remove = ({ data }: DeleteProduct, state: Product): ProductEvent[] => {
  const product = existing(state, data.productId);
  return [{ type: 'ProductDeleted', data: { productId: data.productId, variantIds: product.variantIds } }];
};

const addVariant = ({ data }: AddVariant, state: Product): ProductEvent[] => {
  const product = existing(state, data.productId);
  if (product.variantIds.includes(data.variantId)) throw new ConflictError(`variant ${data.variantId} already exists`);
  if (data.price !== null && !isAmount(data.price)) {
    throw new ValidationError('the price is out of bounds', [{ path: 'body.price', message: AMOUNT_RULE }]);
  }
  return [{ type: 'VariantAdded', data }];
};

const addMedia = ({ data }: AddMedia, state: Product): ProductEvent[] => {
  const product = existing(state, data.productId);
  if (product.mediaIds.includes(data.mediaId)) throw new ConflictError(`media ${data.mediaId} already exists`);
  if (!Number.isInteger(data.sortOrder) || Math.abs(data.sortOrder) > MAX_SORT_ORDER) {
    throw new ValidationError('the sort order is out of bounds', [
      { path: 'body.sort_order', message: `must be an integer -${MAX_SORT_ORDER}..${MAX_SORT_ORDER}` },
    ]);
  }
  if (data.variantId !== null && !product.variantIds.includes(data.variantId)) {
    throw new NotFoundError(`variant ${data.variantId} not found`, [{ path: 'body.variant_id', message: 'not a variant of this product' }]);
  }
  return [{ type: 'MediaAdded', data }];
};

export const decide = (command: ProductCommand, state: Product): ProductEvent[] => {
  switch (command.type) {
    case 'CreateProduct':
      return create(command, state);
    case 'UpdateProduct':
      return update(command, state);
    case 'DeleteProduct':
      return remove(command, state);
    case 'AddVariant':
      return addVariant(command, state);
    case 'AddMedia':
      return addMedia(command, state);
    default: {
      const exhaustive: never = command;
      throw new Error(`unknown command ${JSON.stringify(exhaustive)}`);
    }
  }
};

export const productDecider: Decider<ProductCommand, ProductEvent, Product> = { initialState, evolve, decide };

export const productAggregate = defineAggregate({
  name: 'product',
  stream: 'catalog.product',
  decider: productDecider,
  id: 'productId',
  events: {
    namespace: 'commerce.ledger.catalog',
    types: ['ProductCreated', 'ProductUpdated', 'ProductDeleted', 'VariantAdded', 'MediaAdded'],
  },
});
