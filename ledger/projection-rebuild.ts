import type { Knex } from 'knex';
import { liveSchema, type Projection } from './projection.ts';
import { ProjectionRunner, projectionLockKey, type RunnerDeps } from './projection-runner.ts';
import { Supervisor } from './supervisor.ts';
import { namespaced } from './topics.ts';

export type RebuildProgress = { applied: bigint; total: bigint };

type Checkpoints = Map<string, bigint>;

async function checkpoints(db: Knex, schema: string): Promise<Checkpoints> {
  const exists = await db.raw('select 1 from information_schema.tables where table_schema = ? and table_name = ?', [schema, 'checkpoints']);
  if (exists.rows.length === 0) return new Map();
  const rows = (await db(`${schema}.checkpoints`).select('topic', 'partition', 'offset')) as {
    topic: string;
    partition: number;
    offset: string;
  }[];
  return new Map(rows.map((r) => [`${r.topic}|${r.partition}`, BigInt(r.offset)]));
}

const caughtUp = (rebuilt: Checkpoints, live: Checkpoints) => [...live].every(([key, offset]) => (rebuilt.get(key) ?? -1n) >= offset);

/**
 * Replays a projection from offset 0 into a fresh schema while the live one keeps serving, then swaps
 * the two under the projection's lock once the new one has read at least as far as the live one.
 */
export async function rebuildProjection(
  deps: RunnerDeps,
  projection: Projection,
  options: { swap: boolean; onProgress?: (progress: RebuildProgress) => void; pollMs?: number },
): Promise<{ schema: string }> {
  const { db, kafka, namespace } = deps;
  const live = liveSchema(projection);
  const schema = `${live}__rebuild_${Date.now()}`;
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<string, bigint>();
  for (const topic of projection.topics) {
    const name = namespaced(namespace, topic.name);
    for (const p of await admin.fetchTopicOffsets(name)) ends.set(`${name}|${p.partition}`, BigInt(p.high) - 1n);
  }
  await admin.disconnect();
  const total = [...ends.values()].reduce((sum, end) => sum + end + 1n, 0n);
  const positions = new Map<string, bigint>();
  const supervisor = new Supervisor(`rebuild-${projection.name}`, deps.logger);
  const runner = new ProjectionRunner(
    deps,
    projection,
    {
      schema,
      notify: false,
      onBatch: (topic, partition, offset) => {
        positions.set(`${topic}|${partition}`, BigInt(offset));
        const applied = [...positions.entries()].reduce(
          (sum, [key, at]) => sum + (at < (ends.get(key) ?? 0n) ? at + 1n : (ends.get(key) ?? 0n) + 1n),
          0n,
        );
        options.onProgress?.({ applied, total });
      },
    },
    supervisor,
  );
  await supervisor.start(runner);
  const pollMs = options.pollMs ?? 200;
  try {
    // First reach the end of the log as it was when the rebuild began…
    while (!caughtUp(await checkpoints(db, schema), ends)) await new Promise((r) => setTimeout(r, pollMs));
    if (!options.swap) return { schema };
    // …then swap as soon as the new schema is at least as far as the live one, under the same lock the live runner takes.
    for (;;) {
      const swapped = await db.transaction(async (trx) => {
        await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [projectionLockKey(projection)]);
        if (!caughtUp(await checkpoints(trx, schema), await checkpoints(trx, live))) return false;
        await trx.raw('drop schema if exists ?? cascade', [`${live}__previous`]);
        await trx.raw('alter schema ?? rename to ??', [live, `${live}__previous`]);
        await trx.raw('alter schema ?? rename to ??', [schema, live]);
        return true;
      });
      if (swapped) break;
      await new Promise((r) => setTimeout(r, pollMs));
    }
    await db.raw('drop schema if exists ?? cascade', [`${live}__previous`]);
    return { schema: live };
  } finally {
    await supervisor.stop();
  }
}
