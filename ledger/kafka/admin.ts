import { Admin as ClientAdmin, ConfigResourceTypes, FetchIsolationLevels, ListOffsetTimestamps } from '@platformatic/kafka';
import { sleep } from '../sleep.ts';
import { kafkaErrorType } from './errors.ts';
import type { ClientSettings as Kafka } from './settings.ts';

/** A topic to create: `configEntries` are topic settings (`cleanup.policy`, `min.insync.replicas`, …). */
export type NewTopic = {
  topic: string;
  numPartitions: number;
  replicationFactor?: number;
  configEntries?: { name: string; value: string }[];
};
/** A group's committed offsets of one topic (each the next offset to read; `-1` where nothing is committed). */
export type CommittedTopicOffsets = { topic: string; partitions: { partition: number; offset: string }[] };
export type PartitionMetadata = { partitionId: number; leader: number; replicas: number[]; isr: number[] };

/** The questions the service, its CLIs, benches and tests ask the cluster, on one client of their own. */
export class KafkaAdmin {
  private readonly client: ClientAdmin;

  constructor(kafka: Kafka, options: { retries?: number } = {}) {
    this.client = new ClientAdmin(kafka.options(options.retries === undefined ? {} : { retries: options.retries }));
  }

  /** Reaches the cluster (its metadata): fails when no broker answers. */
  async connect(): Promise<void> {
    await this.client.metadata({ topics: [] });
  }

  async disconnect(): Promise<void> {
    await this.client.close();
  }

  async listTopics(): Promise<string[]> {
    return this.client.listTopics();
  }

  /** The brokers of the cluster as its metadata names them. */
  async describeCluster(): Promise<{ clusterId: string; brokers: { nodeId: number; host: string; port: number }[]; controller: number }> {
    const metadata = await this.client.metadata({ topics: [], forceUpdate: true });
    return {
      clusterId: metadata.id,
      brokers: [...metadata.brokers].map(([nodeId, { host, port }]) => ({ nodeId, host, port })),
      controller: metadata.controllerId,
    };
  }

  /**
   * Creates topics, each with its own partitions, replicas and settings, and (with `waitForLeaders`) waits until every
   * partition has a leader in the metadata.
   */
  async createTopics({ topics, waitForLeaders = true }: { topics: NewTopic[]; waitForLeaders?: boolean }): Promise<void> {
    for (const topic of topics) {
      await this.client.createTopics({
        topics: [topic.topic],
        partitions: topic.numPartitions,
        replicas: topic.replicationFactor ?? 1,
        configs: (topic.configEntries ?? []).map(({ name, value }) => ({ name, value })),
      });
    }
    if (waitForLeaders) await this.leadersOf(topics.map(({ topic }) => topic));
  }

  async deleteTopics({ topics }: { topics: string[] }): Promise<void> {
    if (topics.length > 0) await this.client.deleteTopics({ topics });
  }

  async deleteGroups(groups: string[]): Promise<void> {
    if (groups.length > 0) await this.client.deleteGroups({ groups });
  }

  async listGroups(): Promise<{ groups: { groupId: string }[] }> {
    return { groups: [...(await this.client.listGroups()).keys()].map((groupId) => ({ groupId })) };
  }

  /** Each group's state (`Stable`, `Empty`, `Dead`, …) and its members' instance ids. */
  async describeGroups(
    groups: string[],
  ): Promise<{ groups: { groupId: string; state: string; members: { memberId: string; groupInstanceId: string | null }[] }[] }> {
    const described = await this.client.describeGroups({ groups });
    return {
      groups: [...described.values()].map((group) => ({
        groupId: group.id,
        state: stateName(group.state),
        members: [...group.members.values()].map((member) => ({ memberId: member.id, groupInstanceId: member.groupInstanceId ?? null })),
      })),
    };
  }

  /**
   * A group's committed offsets, of `topics` (each read in full) or of every topic it has committed on. `stable`: wait
   * for offsets a transaction is still committing (KIP-447's UNSTABLE_OFFSET_COMMIT), for a new owner of a partition.
   */
  async fetchOffsets({
    groupId,
    topics,
    stable = false,
  }: {
    groupId: string;
    topics?: string[];
    stable?: boolean;
  }): Promise<CommittedTopicOffsets[]> {
    const groups = topics
      ? [{ groupId, topics: await Promise.all(topics.map(async (name) => ({ name, partitionIndexes: await this.partitionsOf(name) }))) }]
      : [groupId];
    for (let attempt = 0; ; attempt++) {
      try {
        const [group] = await this.client.listConsumerGroupOffsets({ groups, requireStable: stable });
        return (group?.topics ?? []).map(({ name, partitions }) => ({
          topic: name,
          partitions: partitions.map(({ partitionIndex, committedOffset }) => ({
            partition: partitionIndex,
            offset: committedOffset.toString(),
          })),
        }));
      } catch (error) {
        // A transaction still committing offsets: its outcome lands within its timeout.
        if (kafkaErrorType(error) !== 'UNSTABLE_OFFSET_COMMIT' || attempt >= 200) throw error;
        await sleep(Math.min(200, 10 * (attempt + 1)));
      }
    }
  }

  async fetchTopicMetadata({ topics }: { topics: string[] }): Promise<{ topics: { name: string; partitions: PartitionMetadata[] }[] }> {
    const metadata = await this.client.metadata({ topics, forceUpdate: true });
    return {
      topics: topics.flatMap((name) => {
        const topic = metadata.topics.get(name);
        if (!topic) return [];
        return [
          {
            name,
            partitions: topic.partitions.map((partition, partitionId) => ({
              partitionId,
              leader: partition.leader,
              replicas: partition.replicas,
              isr: partition.isr,
            })),
          },
        ];
      }),
    };
  }

  /**
   * The end of each partition of a topic as a read_committed reader sees it (the last stable offset), by partition; with
   * `written`, everything written to it, committed or not (the high watermark).
   */
  async logEnds(topic: string, { written = false }: { written?: boolean } = {}): Promise<Map<number, bigint>> {
    const partitions = await this.partitionsOf(topic);
    const [listed] = await this.client.listOffsets({
      topics: [
        { name: topic, partitions: partitions.map((partitionIndex) => ({ partitionIndex, timestamp: ListOffsetTimestamps.LATEST })) },
      ],
      isolationLevel: written ? FetchIsolationLevels.READ_UNCOMMITTED : FetchIsolationLevels.READ_COMMITTED,
    });
    return new Map((listed?.partitions ?? []).map(({ partitionIndex, offset }) => [partitionIndex, offset]));
  }

  /** The named settings of topics, as the broker reports them (topic → setting → value). */
  async topicSettings(topics: string[], names: string[]): Promise<Record<string, Record<string, string>>> {
    const described = await this.client.describeConfigs({
      resources: topics.map((resourceName) => ({ resourceType: ConfigResourceTypes.TOPIC, resourceName, configurationKeys: names })),
    });
    return Object.fromEntries(
      described.map((resource) => [
        resource.resourceName,
        Object.fromEntries(resource.configs.flatMap(({ name, value }) => (typeof value === 'string' ? [[name, value] as const] : []))),
      ]),
    );
  }

  private async partitionsOf(topic: string): Promise<number[]> {
    const metadata = await this.client.metadata({ topics: [topic] });
    const count = metadata.topics.get(topic)?.partitionsCount ?? 0;
    return Array.from({ length: count }, (_, partition) => partition);
  }

  /** Waits (up to 30 s) until every partition of the topics has a leader. */
  private async leadersOf(topics: string[]): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const metadata = await this.client.metadata({ topics, forceUpdate: true });
        const led = topics.every((name) => {
          const topic = metadata.topics.get(name);
          return topic !== undefined && topic.partitions.length > 0 && topic.partitions.every((partition) => partition.leader >= 0);
        });
        if (led) return;
      } catch (error) {
        if (Date.now() >= deadline) throw error;
      }
      if (Date.now() >= deadline) throw new Error(`no leader for every partition of ${topics.join(', ')} after 30 s`);
      await sleep(100);
    }
  }
}

/** `STABLE` → `Stable`, as Kafka's own tools name a group's state. */
const stateName = (state: string): string =>
  state
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
