import { loadSchema } from './avro-schemas.ts';
import { shortName, subjectFor, type TopicSpec } from './topics.ts';

/** The public event catalog, generated from the aggregates' event topics and the .avsc files: what downstream subscribers rely on. */
export function asyncApiDocument(topics: TopicSpec[]): Record<string, unknown> {
  const eventTopics = topics.filter((t) => t.kind === 'events');
  const messages: Record<string, unknown> = {};
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  for (const topic of eventTopics) {
    const channelMessages: Record<string, unknown> = {};
    for (const record of topic.records) {
      const name = shortName(record);
      messages[name] = {
        name,
        title: name,
        contentType: 'application/vnd.apache.avro+binary',
        summary: `Confluent wire format; registry subject ${subjectFor(topic.name, record)}`,
        bindings: {
          kafka: { key: { type: 'string', description: `the ${topic.key}` }, schemaIdLocation: 'payload', bindingVersion: '0.5.0' },
        },
        payload: { schemaFormat: 'application/vnd.apache.avro+json;version=1.9.0', schema: loadSchema(record) },
      };
      channelMessages[name] = { $ref: `#/components/messages/${name}` };
    }
    const channelId = topic.name.replace(/\./g, '-');
    channels[channelId] = {
      address: topic.name,
      description: `Keyed by ${topic.key}: the events of one aggregate keep their order. Read with isolation.level=read_committed.`,
      messages: channelMessages,
    };
    operations[`consume-${channelId}`] = { action: 'receive', channel: { $ref: `#/channels/${channelId}` } };
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'commerce-ledger events',
      version: '1.0.0',
      description:
        'Every catalog, connection and order change, as Avro events on Kafka. Schemas evolve only in BACKWARD compatible ways; a topic name ends in its major version. Regenerate with `npm run asyncapi`.',
    },
    channels,
    operations,
    components: { messages },
  };
}
