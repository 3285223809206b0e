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
  ]),
  productState: topic('catalog.product.state.v1', 'state', 'productId'),
  commandReplies: topic('ledger.command-replies.v1', 'replies', 'commandId'),
} as const satisfies Record<string, TopicSpec>;

export const allTopics: TopicSpec[] = Object.values(topics);

/** Topic and consumer-group names live under an optional namespace so that several ledgers can share a broker. */
export const namespaced = (namespace: string, name: string): string => (namespace ? `${namespace}.${name}` : name);

export const subjectFor = (topicName: string, recordFullName: string): string => `${topicName}-${recordFullName}`;

export const shortName = (recordFullName: string): string => recordFullName.slice(recordFullName.lastIndexOf('.') + 1);
