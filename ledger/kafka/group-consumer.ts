import { Base, Consumer as ClientConsumer, type ConsumerGroupJoinPayload } from '@platformatic/kafka';
import { GroupClient } from './group-client.ts';
import { KafkaAdmin } from './admin.ts';
import { isBrokerAway, kafkaErrorType, retryKafka } from './errors.ts';
import type { ClientSettings as Kafka } from './settings.ts';
import { Fetcher, PROMPT_FETCH, type FetchedBatch, type FetchSettings } from './fetcher.ts';
import { sleep } from '../sleep.ts';

/** Offsets to commit (each the next offset to read), by topic and partition. */
export type TopicOffsets = { topic: string; partitions: { partition: number; offset: string }[] };
/** A member's partitions, by topic. */
export type Assignment = Record<string, number[]>;
/**
 * Who a consumer is in its group at the moment: what a transaction's offset commit carries (KIP-447), so the group's
 * coordinator refuses it once the partitions have moved to another member (a newer generation).
 */
export type GroupMember = { groupId: string; generationId: number; memberId: string; coordinatorId: number };

export type GroupConsumerOptions = {
  groupId: string;
  topics: string[];
  /**
   * Static membership (KIP-345): the same id after a restart takes the member's place at once, instead of waiting out
   * its session; unique per instance of the service.
   */
  instanceId?: string;
  /** Where a partition without a committed offset is read from: its beginning (default) or what arrives next. */
  fromBeginning?: boolean;
  fetch?: FetchSettings;
  /**
   * Every assignment, whole, with whether it follows a new membership (the member was out of the group meanwhile, so
   * its partitions may have been decided elsewhere): called before the new partitions are fetched.
   */
  onAssignment?: (assignment: Assignment, member: GroupMember, rejoined: boolean) => void;
  /** One partition's batch; batches of several partitions are handled side by side, each partition's in turn. */
  eachBatch: (batch: FetchedBatch, member: GroupMember) => Promise<void>;
  /** The consumer is broken beyond retries in place (a batch's handling failed, the instance id taken). */
  onFailure: (error: unknown) => void;
  onJoin?: () => void;
};

/** A crashed member is out after this long without a heartbeat; a static member's restart does not wait for it. */
const SESSION_TIMEOUT_MS = 10_000;
const HEARTBEAT_INTERVAL_MS = 3_000;

/**
 * A member of a consumer group: joins (as a static member when given an instance id), follows the group's
 * assignments, starts each newly assigned partition at the group's stable committed offset (one no transaction is
 * still committing), and hands each partition's committed records to `eachBatch`. A broker that goes away is waited
 * for in place; the membership heals when it returns.
 */
export class GroupConsumer {
  private readonly client: ClientConsumer;
  private readonly admin: KafkaAdmin;
  private readonly fetcher: Fetcher;
  private assigning: Promise<void> = Promise.resolve();
  private memberId?: string;
  /** The member as of the last assignment: what its batches are committed as until the next one is known. */
  private current?: GroupMember;
  private stopped = false;
  private rejoining = false;

  private readonly kafka: Kafka;
  private readonly options: GroupConsumerOptions;

  constructor(kafka: Kafka, options: GroupConsumerOptions) {
    this.kafka = kafka;
    this.options = options;

    this.client = new GroupClient({
      ...kafka.options(),
      groupId: options.groupId,
      ...(options.instanceId ? { groupInstanceId: options.instanceId } : {}),
      sessionTimeout: SESSION_TIMEOUT_MS,
      rebalanceTimeout: SESSION_TIMEOUT_MS,
      heartbeatInterval: HEARTBEAT_INTERVAL_MS,
    });
    this.admin = new KafkaAdmin(kafka);
    this.fetcher = new Fetcher(
      this.client,
      options.fetch ?? PROMPT_FETCH,
      (batches) => this.deliver(batches),
      (error, fatal) => {
        if (fatal) this.fail(error);
        else kafka.warn('fetch', error, 'fetch failed; asking again');
      },
    );
    this.client.on('consumer:group:join', (payload) => this.joined(payload));
    // The client gave up rejoining (a broker away longer than its retries): the member asks again until it is back.
    this.client.on('error' as never, (error: unknown) => void this.rejoin(error));
    this.client.on('consumer:heartbeat:error', ({ error }) => kafka.warn('heartbeat', error, 'heartbeat failed'));
  }

  /** Joins the group; resolves once the first assignment is known (its partitions may still be preparing). */
  async start(): Promise<void> {
    this.client.topics.trackAll(...this.options.topics);
    // No broker answering, or a group coordinator not there yet (the offsets log being created or loaded on a new
    // broker): asked again every second at most until it answers or the consumer is stopped.
    await retryKafka(
      () => this.client.joinGroup({}),
      (attempt, error) => (!this.stopped && isBrokerAway(error) ? Math.min(1_000, 100 * (attempt + 1)) : undefined),
    );
    await this.assigning;
  }

  /** Stops fetching, waits for the batches in hand, then leaves the group (its partitions move at once). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.fetcher.stop();
    await this.assigning.catch(() => undefined);
    await this.client.close().catch(async () => {
      // A coordinator that cannot be reached cannot be told goodbye: the session expires instead. Close the connections.
      await Base.prototype.close.call(this.client).catch(() => undefined);
    });
    await this.admin.disconnect().catch(() => undefined);
  }

  /**
   * Who the consumer is in its group as of its last assignment (for a transaction's offsets). Not the client's live
   * generation: between a rebalance's JoinGroup and its assignment that one is already new while the partitions are
   * not yet known, and a commit made with it could cover a partition that has just moved elsewhere.
   */
  member(): GroupMember {
    if (this.current) return this.current;
    const { groupId, generationId, memberId, coordinatorId } = this.client;
    return withLiveCoordinator({ groupId, generationId, memberId: memberId ?? '', coordinatorId: coordinatorId ?? -1 }, this.client);
  }

  /** Reads a partition (still this member's) again from the group's stable committed offset: a round of it was aborted. */
  async rewind(topic: string, partition: number): Promise<void> {
    const starts = await this.startingOffsets([topic]);
    if (this.stopped || !this.fetcher.has(topic, partition)) return;
    this.fetcher.seek(topic, partition, starts.get(`${topic}:${partition}`) ?? 0n);
  }

  /** Commits offsets outside a transaction (refused once the partitions have moved to another member). */
  async commitOffsets(offsets: TopicOffsets[]): Promise<void> {
    const list = offsets.flatMap(({ topic, partitions }) =>
      partitions.map(({ partition, offset }) => ({ topic, partition, offset: BigInt(offset), leaderEpoch: -1 })),
    );
    if (list.length > 0) await this.client.commit({ offsets: list });
  }

  private deliver(batches: FetchedBatch[]): Promise<void> {
    const member = this.member();
    return Promise.all(batches.map((batch) => this.options.eachBatch(batch, member))).then(() => undefined);
  }

  private joined({ memberId, assignments }: ConsumerGroupJoinPayload): void {
    const rejoined = this.memberId !== undefined && this.memberId !== memberId;
    this.memberId = memberId;
    const assignment: Assignment = Object.fromEntries((assignments ?? []).map(({ topic, partitions }) => [topic, [...partitions]]));
    const { groupId, generationId, coordinatorId } = this.client;
    const member = withLiveCoordinator({ groupId, generationId, memberId, coordinatorId: coordinatorId ?? -1 }, this.client);
    this.current = member;
    // A member that was out of the group reads everything again from what the group committed.
    if (rejoined) this.fetcher.dropAll();
    this.assigning = this.assigning
      .catch(() => undefined)
      .then(() => this.assign(assignment, member, rejoined))
      .catch((error: unknown) => this.fail(error));
    this.options.onJoin?.();
  }

  private async assign(assignment: Assignment, member: GroupMember, rejoined: boolean): Promise<void> {
    if (this.stopped) return;
    const owned = new Set(Object.entries(assignment).flatMap(([topic, partitions]) => partitions.map((p) => `${topic}:${p}`)));
    for (const { topic, partition } of this.fetcher.partitions()) {
      if (!owned.has(`${topic}:${partition}`)) this.fetcher.drop(topic, partition);
    }
    this.options.onAssignment?.(assignment, member, rejoined);
    const added = Object.entries(assignment).flatMap(([topic, partitions]) =>
      partitions.filter((partition) => !this.fetcher.has(topic, partition)).map((partition) => ({ topic, partition })),
    );
    if (added.length === 0) return;
    const starts = await this.startingOffsets([...new Set(added.map(({ topic }) => topic))]);
    // A newer assignment arrived meanwhile: it positions its own partitions.
    if (this.stopped || this.current !== member) return;
    for (const { topic, partition } of added) this.fetcher.seek(topic, partition, starts.get(`${topic}:${partition}`) ?? 0n);
  }

  /** Where each partition of the topics starts: the group's stable committed offset, else the log's start or end. */
  private async startingOffsets(topics: string[]): Promise<Map<string, bigint>> {
    const starts = new Map<string, bigint>();
    for (let attempt = 0; ; attempt++) {
      try {
        const committed = await this.admin.fetchOffsets({ groupId: this.options.groupId, topics, stable: true });
        for (const topic of topics) {
          const ends = this.options.fromBeginning === false ? await this.admin.logEnds(topic) : new Map<number, bigint>();
          const partitions = committed.find((c) => c.topic === topic)?.partitions ?? [];
          for (const [partition, end] of ends) starts.set(`${topic}:${partition}`, end);
          for (const { partition, offset } of partitions) if (BigInt(offset) >= 0n) starts.set(`${topic}:${partition}`, BigInt(offset));
        }
        return starts;
      } catch (error) {
        if (this.stopped || attempt >= 30) throw error;
        this.kafka.warn('offsets', error, 'committed offsets not read yet');
        await sleep(Math.min(1_000, 100 * (attempt + 1)));
      }
    }
  }

  private async rejoin(error: unknown): Promise<void> {
    if (kafkaErrorType(error) === 'FENCED_INSTANCE_ID') {
      this.fail(
        new Error(`another process is a member of ${this.options.groupId} as ${this.options.instanceId}: set INSTANCE_ID uniquely`, {
          cause: error,
        }),
      );
      return;
    }
    if (this.rejoining || this.stopped) return;
    this.rejoining = true;
    this.kafka.warn('rejoin', error, 'group membership lost; joining again');
    try {
      for (let attempt = 0; !this.stopped; attempt++) {
        try {
          await this.client.joinGroup({});
          return;
        } catch (failure) {
          if (kafkaErrorType(failure) === 'FENCED_INSTANCE_ID') return this.fail(failure);
          await sleep(Math.min(1_000, 100 * 2 ** attempt));
        }
      }
    } finally {
      this.rejoining = false;
    }
  }

  private fail(error: unknown): void {
    if (this.stopped) return;
    this.options.onFailure(error);
  }
}

/**
 * The member as of an assignment (its generation and member id, the KIP-447 fence), with the group's coordinator as
 * the client knows it when a commit is sent: a coordinator moves without a new assignment (its broker restarted), and
 * the client forgets it on NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or a network error and finds the new one with
 * its next group request. Until it has, the assignment's coordinator is asked (and answers NOT_COORDINATOR: retried).
 */
function withLiveCoordinator(member: GroupMember, client: ClientConsumer): GroupMember {
  const { groupId, generationId, memberId } = member;
  return {
    groupId,
    generationId,
    memberId,
    get coordinatorId() {
      return client.coordinatorId ?? member.coordinatorId;
    },
  };
}
