import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { loadSchema } from './avro-schemas.ts';
import type { Event, EventEnvelope, RecordedEvent } from './message.ts';
import { namespaced, shortName, subjectFor, type TopicSpec } from './topics.ts';

type AvroRecord = { envelope: EventEnvelope } & Record<string, unknown>;

/** Avro encoding of events through the schema registry, one subject per topic and record (TopicRecordName). */
export class EventCodec {
  private readonly ids: Map<string, number>;

  private readonly registry: SchemaRegistry;
  private readonly namespace: string;

  constructor(registry: SchemaRegistry, namespace: string, ids: Iterable<[string, number]> = []) {
    this.registry = registry;
    this.namespace = namespace;

    this.ids = new Map(ids);
  }

  /** `ids`: what `schemaIds` of a codec that registered them said, so this one encodes without asking the registry. */
  static connect(url: string, namespace: string, ids: Iterable<[string, number]> = []): EventCodec {
    return new EventCodec(new SchemaRegistry({ host: url }), namespace, ids);
  }

  /** The schema id of every record registered so far, by topic and record. */
  schemaIds(): [string, number][] {
    return [...this.ids];
  }

  /** Registers every record of the given event topics; the registry rejects a change that is not BACKWARD compatible. */
  async registerAll(eventTopics: TopicSpec[]): Promise<void> {
    const records = eventTopics.flatMap((spec) => spec.records.map((record) => ({ topic: namespaced(this.namespace, spec.name), record })));
    await Promise.all(
      records.map(async ({ topic, record }) => {
        const schema = JSON.stringify(loadSchema(record));
        const { id } = await this.registry.register({ type: SchemaType.AVRO, schema }, { subject: subjectFor(topic, record) });
        this.ids.set(`${topic}|${shortName(record)}`, id);
      }),
    );
  }

  async encode(topic: string, event: Event, envelope: EventEnvelope): Promise<Buffer> {
    const id = this.ids.get(`${topic}|${event.type}`);
    if (id === undefined) throw new Error(`no schema registered for ${event.type} on ${topic}`);
    const record: AvroRecord = { envelope, ...(event.data as Record<string, unknown>) };
    return this.registry.encode(id, record);
  }

  async decode(value: Buffer, position: RecordedEvent['position']): Promise<RecordedEvent> {
    const { envelope, ...data } = (await this.registry.decode(value)) as AvroRecord;
    return { type: envelope.eventType, data, envelope: normalizeEnvelope(envelope), position };
  }
}

/** avsc hands back longs as numbers and unions unwrapped; keep exactly the TS shape. */
const normalizeEnvelope = (envelope: EventEnvelope): EventEnvelope => ({
  ...envelope,
  occurredAt: Number(envelope.occurredAt),
  actor: { userId: envelope.actor.userId ?? null, email: envelope.actor.email ?? null, ip: envelope.actor.ip ?? null },
});
