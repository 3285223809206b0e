import type { Knex } from 'knex';
import { logEnds } from './kafka.ts';
import { liveSchema, type Projection } from './projection.ts';
import { ProjectionRunner, projectionGroupId, projectionLockStatement, type RunnerDeps } from './projection-runner.ts';
import { Supervisor } from './supervisor.ts';
import { namespaced } from './topics.ts';

export type RebuildProgress = { applied: bigint; total: bigint };

export type RebuildOptions = {
  swap: boolean;
  onProgress?: (progress: RebuildProgress) => void;
  /** What the operator should know and is not an error: leftovers dropped, checkpoints of other namespaces ignored. */
  onNotice?: (message: string) => void;
  pollMs?: number;
  /** Gives up (RebuildError) if the rebuild has not caught up and swapped within this time; none by default. */
  timeoutMs?: number;
  /** Aborting stops the rebuild: its schema and consumer group are dropped, and the promise rejects with the reason. */
  signal?: AbortSignal;
};

/** A rebuild that could not finish (timed out, or another one holds the projection): its message is one line for the operator. */
export class RebuildError extends Error {}

type Checkpoints = Map<string, bigint>;

const key = (topic: string, partition: number) => `${topic}|${partition}`;

async function checkpoints(db: Knex, schema: string, topics: ReadonlySet<string>): Promise<Checkpoints> {
  const exists = await db.raw('select 1 from information_schema.tables where table_schema = ? and table_name = ?', [schema, 'checkpoints']);
  if (exists.rows.length === 0) return new Map();
  const rows = (await db(`${schema}.checkpoints`).select('topic', 'partition', 'offset')) as {
    topic: string;
    partition: number;
    offset: string;
  }[];
  return new Map(rows.filter((r) => topics.has(r.topic)).map((r) => [key(r.topic, r.partition), BigInt(r.offset)]));
}

/** The positions `rebuilt` has yet to reach, as `topic[partition] at x of y` (empty: caught up). */
const behind = (rebuilt: Checkpoints, target: Checkpoints): string[] =>
  [...target]
    .filter(([k, offset]) => (rebuilt.get(k) ?? -1n) < offset)
    .map(([k, offset]) => {
      const [topic, partition] = k.split('|');
      return `${topic}[${partition}] at ${rebuilt.get(k) ?? 'nothing'} of ${offset}`;
    });

const summary = (positions: string[]) =>
  positions.length <= 3 ? positions.join(', ') : `${positions.slice(0, 3).join(', ')} and ${positions.length - 3} more`;

const rebuildSchemaPattern = (projection: Projection) => `^${liveSchema(projection)}__(rebuild_[0-9]+|previous)$`;

async function generationOf(db: Knex, schema: string): Promise<string | undefined> {
  const exists = await db.raw('select 1 from information_schema.tables where table_schema = ? and table_name = ?', [schema, 'generation']);
  if (exists.rows.length === 0) return undefined;
  return ((await db(`${schema}.generation`).first('id')) as { id: string } | undefined)?.id;
}

/** Drops a rebuild schema and the consumer group its runner made (in this namespace), best effort for the group. */
async function dropRebuild(deps: RunnerDeps, projection: Projection, schema: string): Promise<void> {
  const generation = await generationOf(deps.db, schema);
  await deps.db.raw('drop schema if exists ?? cascade', [schema]);
  if (!generation) return;
  const admin = deps.kafka.admin();
  try {
    await admin.connect();
    await admin.deleteGroups([projectionGroupId(deps.namespace, projection, generation)]);
  } catch {
    // No such group (the run died before its consumer joined, or it was another namespace's): nothing to delete.
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Replays a projection from offset 0 into a fresh schema while the live one keeps serving, then swaps
 * the two under the projection's lock once the new one has read at least as far as the live one.
 *
 * Only the topics this namespace's runner reads count: the live schema may also hold checkpoints of other namespaces
 * sharing the database, which this rebuild never reads. One rebuild of a projection runs at a time per database (a
 * session advisory lock); the first thing it does is drop what an earlier, killed rebuild of it left behind
 * (`rm_<name>__rebuild_<ts>`, `rm_<name>__previous`). On a timeout, an abort or any failure, it drops its own schema and
 * consumer group before it rejects.
 */
export async function rebuildProjection(deps: RunnerDeps, projection: Projection, options: RebuildOptions): Promise<{ schema: string }> {
  const { db, pool, kafka, namespace } = deps;
  const { signal } = options;
  const live = liveSchema(projection);
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  const pollMs = options.pollMs ?? 200;
  const ownTopics = new Set(projection.topics.map((topic) => namespaced(namespace, topic.name)));

  // A session lock on a connection of its own, held for the whole rebuild: released by the server if this process dies.
  const guard = await pool.connect();
  let unlockFailed: Error | undefined;
  const onLost = (error: Error) => (unlockFailed ??= error); // the lock went with the connection; the next query fails
  guard.on('error', onLost);
  const lockKey = `replay:${projection.name}`;
  try {
    const { rows } = await guard.query<{ locked: boolean }>('select pg_try_advisory_lock(hashtext($1)) as locked', [lockKey]);
    if (!rows[0]?.locked) throw new RebuildError(`${projection.name}: another replay of ${projection.name} is running on this database`);
    try {
      const leftovers = await db.raw('select nspname from pg_namespace where nspname ~ ? order by nspname', [
        rebuildSchemaPattern(projection),
      ]);
      for (const { nspname } of leftovers.rows as { nspname: string }[]) {
        await dropRebuild(deps, projection, nspname);
        options.onNotice?.(`${projection.name}: dropped ${nspname}, left behind by an earlier replay that did not finish`);
      }
      return await rebuild();
    } finally {
      // A connection that could not unlock goes away with its lock, rather than back to the pool holding it.
      await guard.query('select pg_advisory_unlock(hashtext($1))', [lockKey]).catch((error: Error) => (unlockFailed ??= error));
    }
  } finally {
    guard.off('error', onLost);
    guard.release(unlockFailed);
  }

  async function rebuild(): Promise<{ schema: string }> {
    const schema = `${live}__rebuild_${Date.now()}`;
    const foreign = (await db
      .raw('select distinct topic from ??.checkpoints', [live])
      .then((r: { rows: { topic: string }[] }) => r.rows.map((row) => row.topic))
      .catch(() => [])) as string[];
    const ignored = foreign.filter((topic) => !ownTopics.has(topic));
    if (ignored.length > 0)
      options.onNotice?.(
        `${projection.name}: ${live} also holds checkpoints of ${ignored.length} topic(s) this namespace does not read (${summary(ignored)}); ` +
          'they are not replayed, and their rows are absent from the rebuilt schema',
      );

    const admin = kafka.admin();
    await admin.connect();
    const ends: Checkpoints = new Map();
    try {
      for (const name of ownTopics) {
        for (const [partition, end] of await logEnds(admin, name)) ends.set(key(name, partition), end - 1n);
      }
    } finally {
      await admin.disconnect();
    }
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
          positions.set(key(topic, partition), BigInt(offset));
          const applied = [...positions.entries()].reduce(
            (sum, [k, at]) => sum + (at < (ends.get(k) ?? 0n) ? at + 1n : (ends.get(k) ?? 0n) + 1n),
            0n,
          );
          options.onProgress?.({ applied, total });
        },
      },
      supervisor,
    );
    options.onProgress?.({ applied: 0n, total });
    let swapped = false;
    const timedOut = (waitingFor: string, lagging: string[]) =>
      new RebuildError(
        `${projection.name}: timed out after ${Math.round((options.timeoutMs ?? 0) / 1000)} s waiting for ${schema} to reach ${waitingFor}: ${summary(lagging)}`,
      );
    try {
      await supervisor.start(runner);
      // First reach the end of the log as it was when the rebuild began…
      for (;;) {
        const lagging = behind(await checkpoints(db, schema, ownTopics), ends);
        if (lagging.length === 0) break;
        if (Date.now() >= deadline) throw timedOut('the end of the log as of its start', lagging);
        await pause(pollMs, signal);
      }
      if (total === 0n) options.onProgress?.({ applied: 0n, total });
      if (!options.swap) return { schema };
      // …then swap as soon as the new schema is at least as far as the live one, under the same lock the live runner takes.
      for (;;) {
        signal?.throwIfAborted();
        const lagging = await db.transaction(async (trx) => {
          await trx.raw(projectionLockStatement(projection));
          const left = behind(await checkpoints(trx, schema, ownTopics), await checkpoints(trx, live, ownTopics));
          if (left.length > 0) return left;
          await trx.raw('drop schema if exists ?? cascade', [`${live}__previous`]);
          await trx.raw('alter schema ?? rename to ??', [live, `${live}__previous`]);
          await trx.raw('alter schema ?? rename to ??', [schema, live]);
          return [];
        });
        if (lagging.length === 0) break;
        if (Date.now() >= deadline) throw timedOut(`the live checkpoints of ${live}`, lagging);
        await pause(pollMs, signal);
      }
      swapped = true;
      await db.raw('drop schema if exists ?? cascade', [`${live}__previous`]);
      return { schema: live };
    } catch (error) {
      await supervisor.stop();
      if (!swapped) await dropRebuild(deps, projection, schema);
      throw error;
    } finally {
      await supervisor.stop();
    }
  }
}
