import { logEnds, type Admin, type Kafka } from './kafka.ts';

/** One consumer group's committed offsets (`KafkaAdmin.fetchOffsets`): `-1` where it has committed nothing. */
export type GroupOffsets = { group: string; topics: { topic: string; partitions: { partition: number; offset: string }[] }[] };
/** The end of each topic's partitions (the high watermark, `logEnds`), by topic and partition. */
export type LogEnds = ReadonlyMap<string, ReadonlyMap<number, string>>;
export type ConsumerLagSample = { group: string; topic: string; partition: number; lag: number };

/**
 * The lag of every partition a group has committed an offset for: the log end minus the committed offset (never below
 * zero). Partitions the group has committed nothing for, or whose end is unknown, are left out. On a transactional
 * topic the log end counts the commit marker after the last record, so an idle group reading one shows 1 there.
 */
export function consumerLags(groups: readonly GroupOffsets[], ends: LogEnds): ConsumerLagSample[] {
  const samples: ConsumerLagSample[] = [];
  for (const { group, topics } of groups) {
    for (const { topic, partitions } of topics) {
      for (const { partition, offset } of partitions) {
        const committed = BigInt(offset);
        const end = ends.get(topic)?.get(partition);
        if (committed < 0n || end === undefined) continue;
        const lag = BigInt(end) - committed;
        samples.push({ group, topic, partition, lag: lag > 0n ? Number(lag) : 0 });
      }
    }
  }
  return samples;
}

/**
 * The groups to report among those of the broker: the namespace's (by name prefix) that have members, and those the
 * service always runs (`known`: its processors and routers) even while they have none (a part restarting). A group
 * nobody consumes with any more (a dead edge instance's, a projection's previous generation) is left out.
 */
export function groupsToReport(
  groups: readonly { groupId: string; state: string }[],
  prefix: string,
  known: ReadonlySet<string>,
): string[] {
  return groups
    .filter(({ groupId, state }) => groupId.startsWith(prefix) && (known.has(groupId) || (state !== 'Empty' && state !== 'Dead')))
    .map(({ groupId }) => groupId)
    .sort();
}

export type ConsumerLagOptions = {
  /** Lags this recent are served again rather than read anew (frequent scrapes cost the brokers nothing more). */
  maxAgeMs: number;
  /** The longest a scrape waits for a reading: then it serves the last one (a broker outage never blocks /metrics). */
  timeoutMs: number;
};

/**
 * Consumer lag per group, topic and partition, read from the brokers when scraped: one `listGroups`, one
 * `describeGroups`, one `fetchOffsets` per group and one `logEnds` per topic they read. At most one reading
 * at a time; a scrape waits `timeoutMs` for it at most and otherwise serves the last values with their age.
 */
export class ConsumerLagReader {
  private admin?: Admin;
  private last?: { at: number; samples: ConsumerLagSample[] };
  private reading?: Promise<void>;

  private readonly kafka: Kafka;
  /** Every group name of the service's namespace starts with it. */
  private readonly prefix: string;
  private readonly known: ReadonlySet<string>;
  private readonly options: ConsumerLagOptions;

  constructor(
    kafka: Kafka,
    prefix: string,
    known: ReadonlySet<string>,
    options: ConsumerLagOptions = { maxAgeMs: 2_000, timeoutMs: 2_000 },
  ) {
    this.kafka = kafka;
    this.prefix = prefix;
    this.known = known;
    this.options = options;
  }

  /** The latest lags and how old they are (seconds), after a fresh reading if the last is older than `maxAgeMs`; none before a first reading. */
  async read(): Promise<{ samples: ConsumerLagSample[]; ageSeconds: number } | undefined> {
    if (!this.last || Date.now() - this.last.at >= this.options.maxAgeMs) {
      this.reading ??= this.readBrokers().finally(() => {
        this.reading = undefined;
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.options.timeoutMs);
      });
      await Promise.race([this.reading.catch(() => undefined), timeout]);
      clearTimeout(timer);
    }
    const last = this.last;
    return last && { samples: last.samples, ageSeconds: (Date.now() - last.at) / 1000 };
  }

  async stop(): Promise<void> {
    await this.reading?.catch(() => undefined);
    await this.admin?.disconnect().catch(() => undefined);
    this.admin = undefined;
  }

  private async readBrokers(): Promise<void> {
    try {
      if (!this.admin) {
        const admin = this.kafka.admin({ retries: 0 });
        await admin.connect();
        this.admin = admin;
      }
      const admin = this.admin;
      const listed = (await admin.listGroups()).groups.filter(({ groupId }) => groupId.startsWith(this.prefix));
      const described = listed.length > 0 ? (await admin.describeGroups(listed.map(({ groupId }) => groupId))).groups : [];
      const groups = await Promise.all(
        groupsToReport(described, this.prefix, this.known).map(async (group): Promise<GroupOffsets> => ({
          group,
          topics: await admin.fetchOffsets({ groupId: group }),
        })),
      );
      const topics = [...new Set(groups.flatMap(({ topics: read }) => read.map(({ topic }) => topic)))];
      // A topic gone since the group committed on it (deleted) leaves its partitions out, not the whole reading.
      const endsOf = async (topic: string) =>
        new Map([...(await logEnds(admin, topic))].map(([partition, end]) => [partition, end.toString()] as const));
      const ends = new Map(
        await Promise.all(topics.map(async (topic) => [topic, await endsOf(topic).catch(() => new Map<number, string>())] as const)),
      );
      this.last = { at: Date.now(), samples: consumerLags(groups, ends) };
    } catch (error) {
      // A fresh admin next time: its connections may be to a broker that went away.
      const admin = this.admin;
      this.admin = undefined;
      await admin?.disconnect().catch(() => undefined);
      throw error;
    }
  }
}
