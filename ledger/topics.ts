/**
 * Topic shapes, keys and Avro subjects. Each aggregate's topics follow from its declaration (ledger/aggregate.ts);
 * event topics are a public API (docs/asyncapi.json), command, state and reply topics are private and carry JSON.
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

export const topic = (name: string, kind: TopicKind, key: string, records: readonly string[] = []): TopicSpec => ({
  name,
  kind,
  key,
  records,
  compacted: kind === 'state',
});

/** The ledger's own topic: every processor's decisions, read by the edge. */
export const topics = {
  commandReplies: topic('ledger.command-replies.v1', 'replies', 'commandId'),
} as const satisfies Record<string, TopicSpec>;

/** Topic and consumer-group names live under an optional namespace so that several ledgers can share a broker. */
export const namespaced = (namespace: string, name: string): string => (namespace ? `${namespace}.${name}` : name);

export const subjectFor = (topicName: string, recordFullName: string): string => `${topicName}-${recordFullName}`;

export const shortName = (recordFullName: string): string => recordFullName.slice(recordFullName.lastIndexOf('.') + 1);
