/**
 * The one place that maps topics to their keys and Avro subjects. Event topics are a public API
 * (docs/asyncapi.yaml); command, state and reply topics are private to the service and carry JSON.
 */
export type TopicKind = 'events' | 'commands' | 'state' | 'replies';

export type TopicSpec = {
  name: string;
  kind: TopicKind;
  key: string;
  /** Avro record full names carried by an events topic; subjects are `<topic>-<record>` (TopicRecordName). */
  records: readonly string[];
  compacted: boolean;
};

const topic = (name: string, kind: TopicKind, key: string, records: readonly string[] = []): TopicSpec => ({
  name,
  kind,
  key,
  records,
  compacted: kind === 'state',
});

export const topics = {
  productCommands: topic('catalog.product.commands.v1', 'commands', 'productId'),
  productEvents: topic('catalog.product.events.v1', 'events', 'productId', [
    'commerce.ledger.catalog.ProductCreated',
    'commerce.ledger.catalog.ProductUpdated',
    'commerce.ledger.catalog.ProductDeleted',
    'commerce.ledger.catalog.VariantAdded',
    'commerce.ledger.catalog.MediaAdded',
  ]),
  productState: topic('catalog.product.state.v1', 'state', 'productId'),
  taxonomyCommands: topic('catalog.taxonomy.commands.v1', 'commands', 'taxonomyId'),
  taxonomyEvents: topic('catalog.taxonomy.events.v1', 'events', 'taxonomyId', [
    'commerce.ledger.catalog.CategoryCreated',
    'commerce.ledger.catalog.AttributeCreated',
    'commerce.ledger.catalog.AttributeGroupCreated',
    'commerce.ledger.catalog.TemplateCreated',
  ]),
  taxonomyState: topic('catalog.taxonomy.state.v1', 'state', 'taxonomyId'),
  brandCommands: topic('catalog.brand.commands.v1', 'commands', 'brandId'),
  brandEvents: topic('catalog.brand.events.v1', 'events', 'brandId', ['commerce.ledger.catalog.BrandCreated']),
  brandState: topic('catalog.brand.state.v1', 'state', 'brandId'),
  productQualityCommands: topic('quality.product.commands.v1', 'commands', 'productId'),
  productQualityEvents: topic('quality.product.events.v1', 'events', 'productId', [
    'commerce.ledger.quality.ProductQualityAssessed',
    'commerce.ledger.quality.ValidationIssueRaised',
    'commerce.ledger.quality.ValidationIssueResolved',
  ]),
  productQualityState: topic('quality.product.state.v1', 'state', 'productId'),
  skuUsageCommands: topic('quality.sku.commands.v1', 'commands', 'skuUsageId'),
  skuUsageEvents: topic('quality.sku.events.v1', 'events', 'skuUsageId', [
    'commerce.ledger.quality.SkuUsesCounted',
    'commerce.ledger.quality.ValidationIssueRaised',
    'commerce.ledger.quality.ValidationIssueResolved',
  ]),
  skuUsageState: topic('quality.sku.state.v1', 'state', 'skuUsageId'),
  orderCommands: topic('oms.order.commands.v1', 'commands', 'orderId'),
  orderEvents: topic('oms.order.events.v1', 'events', 'orderId', [
    'commerce.ledger.oms.OrderPlaced',
    'commerce.ledger.oms.OrderConfirmed',
    'commerce.ledger.oms.OrderRejected',
    'commerce.ledger.oms.OrderStatusChanged',
    'commerce.ledger.oms.OrderStatusChangeRejected',
  ]),
  orderState: topic('oms.order.state.v1', 'state', 'orderId'),
  inventoryCommands: topic('oms.inventory.commands.v1', 'commands', 'inventoryId'),
  inventoryEvents: topic('oms.inventory.events.v1', 'events', 'inventoryId', [
    'commerce.ledger.inventory.StockLocationCreated',
    'commerce.ledger.inventory.StockAdjusted',
    'commerce.ledger.inventory.StockReserved',
    'commerce.ledger.inventory.StockReservationRefused',
    'commerce.ledger.inventory.StockReleased',
    'commerce.ledger.inventory.StockShipped',
  ]),
  inventoryState: topic('oms.inventory.state.v1', 'state', 'inventoryId'),
  commandReplies: topic('ledger.command-replies.v1', 'replies', 'commandId'),
} as const satisfies Record<string, TopicSpec>;

export const allTopics: TopicSpec[] = Object.values(topics);

/** Topic and consumer-group names live under an optional namespace so that several ledgers can share a broker. */
export const namespaced = (namespace: string, name: string): string => (namespace ? `${namespace}.${name}` : name);

export const subjectFor = (topicName: string, recordFullName: string): string => `${topicName}-${recordFullName}`;

export const shortName = (recordFullName: string): string => recordFullName.slice(recordFullName.lastIndexOf('.') + 1);
