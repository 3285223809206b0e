import { kafkaErrorType, retryKafka, topicSettings, type Admin, type Replication } from './kafka.ts';

export type { Replication } from './kafka.ts';

/**
 * The replication the service's topics get: the settings where given, else what the cluster can hold — 3 and 2 on three
 * or more brokers (one broker may be away, or lost, without refusing a write or losing one), 1 and 1 on a single broker.
 */
export function replicationFor(brokers: number, settings: { factor?: number; minInsync?: number }): Replication {
  const factor = settings.factor ?? Math.min(3, Math.max(1, brokers));
  return { factor, minInsync: settings.minInsync ?? Math.max(1, factor - 1) };
}

/** Why the settings cannot hold on this cluster, if they cannot: more copies than brokers, or min.insync above the copies. */
export function replicationProblem({ factor, minInsync }: Replication, brokers: number): string | undefined {
  if (factor > brokers) return `a replication factor of ${factor} needs ${factor} brokers; the cluster has ${brokers}`;
  if (minInsync > factor) return `min.insync.replicas ${minInsync} is more than the replication factor ${factor}: no write could succeed`;
  return undefined;
}

/** Each of the existing topics `names`: its fewest copies of a partition, and its min.insync.replicas. */
export async function topicReplication(admin: Admin, names: string[]): Promise<Map<string, Replication>> {
  if (names.length === 0) return new Map();
  // Topics just created reach every broker's metadata a moment later: a broker asked before answers "unknown topic".
  return retryKafka(
    () => readReplication(admin, names),
    (attempt, error) =>
      kafkaErrorType(error) === 'UNKNOWN_TOPIC_OR_PARTITION' && attempt < 29 ? Math.min(1_000, 50 * (attempt + 1)) : undefined,
  );
}

async function readReplication(admin: Admin, names: string[]): Promise<Map<string, Replication>> {
  const { topics } = await admin.fetchTopicMetadata({ topics: names });
  const settings = await topicSettings(admin, names, ['min.insync.replicas']);
  const minInsyncOf = new Map(Object.entries(settings).map(([name, values]) => [name, Number(values['min.insync.replicas'] ?? 1)]));
  return new Map(
    topics.map((topic) => [
      topic.name,
      { factor: Math.min(...topic.partitions.map((partition) => partition.replicas.length)), minInsync: minInsyncOf.get(topic.name) ?? 1 },
    ]),
  );
}

/**
 * The existing topics (of `names`) kept with fewer copies, or acknowledging with fewer, than `wanted`: one line each.
 * A topic created before the cluster grew, or by hand, is reported rather than silently used below the setting.
 */
export async function replicationShortfalls(admin: Admin, names: string[], wanted: Replication): Promise<string[]> {
  const shortfalls: string[] = [];
  for (const [name, { factor, minInsync }] of await topicReplication(admin, names)) {
    if (factor < wanted.factor) shortfalls.push(`${name}: replication factor ${factor} < ${wanted.factor}`);
    if (minInsync < wanted.minInsync) shortfalls.push(`${name}: min.insync.replicas ${minInsync} < ${wanted.minInsync}`);
  }
  return shortfalls;
}
