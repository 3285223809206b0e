import type { Knex } from 'knex';
import pg, { type ClientBase, type QueryResult } from 'pg';
import type { EventCodec } from './event-codec.ts';
import { GroupCommit } from './group-commit.ts';
import { GATHERED_FETCH, GroupConsumer, PROMPT_FETCH, type FetchedBatch, type FetchSettings, type Kafka } from './kafka.ts';
import { periodicallyCommitting, type PeriodicCommit } from './periodic-commit.ts';
import type { Logger } from './logger.ts';
import type { RecordedEvent } from './message.ts';
import { liveSchema, prepareProjectionSchema, projectionContext, type Projection } from './projection.ts';
import type { PartSignals } from './supervisor.ts';
import { errorField, ThrottledLog } from './throttled-log.ts';
import { withPooledConnection } from './database.ts';
import { FirstStatistics } from './first-statistics.ts';
import { holdingWrites, type HoldingConnection } from './held-writes.ts';
import { namespaced } from './topics.ts';

export const PROGRESS_CHANNEL = 'ledger_projection_progress';
/** `<projection>|<key>,<key>…`: the await keys (`Projection.awaitKeyOf`) of the events a live runner's transaction applied. */
export const KEYS_CHANNEL = 'ledger_projection_keys';
/** A notification's payload must stay under 8 000 bytes: keys go in notices of at most this many characters. */
const KEYS_NOTICE_CHARS = 7_000;

/** `db` builds the projections' queries and runs their migrations; their batches run on connections of `pool`. */
export type RunnerDeps = { kafka: Kafka; codec: EventCodec; db: Knex; pool: pg.Pool; namespace: string; logger: Logger };

export type RunnerOptions = {
  /** The schema of the runner's (first) projection; a group's other members use their live schemas. */
  schema: string;
  /** Only the live read model announces its progress to waiting writers. */
  notify: boolean;
  onBatch?: (topic: string, partition: number, offset: string) => void;
};

/** An event a projection could not apply, with where it sits in the log: the one line an operator needs to find it. */
export class ProjectionEventError extends Error {
  readonly projection: string;
  readonly event: Pick<RecordedEvent, 'type' | 'position'> & { eventId: string };
  readonly failure: unknown;

  constructor(
    projection: string,
    event: Pick<RecordedEvent, 'type' | 'position'> & { eventId: string },
    // Not `cause`: the log keeps this error's message, with the coordinates, rather than digging past it.
    failure: unknown,
  ) {
    const { topic, partition, offset } = event.position;
    super(`projection ${projection} cannot apply ${event.type} at ${topic}/${partition}@${offset}: ${errorField(failure).message}`);
    this.projection = projection;
    this.event = event;
    this.failure = failure;

    this.name = 'ProjectionEventError';
  }
}

export const projectionLockKey = (projection: Pick<Projection, 'name'>): string => `projection:${projection.name}`;

/**
 * A lock holder that stops talking within its transaction (a process paused mid-batch, SIGSTOP or a long GC pause) is
 * cut off by Postgres after this long, so it cannot hold every instance's projection, and read-your-writes, hostage.
 */
export const PROJECTION_IDLE_TIMEOUT_MS = 10_000;

/**
 * The statement that takes a projection's transaction-scoped lock (its live runner, a replay): its key as a literal, so
 * it can lead a simple query of several statements. The transaction is ended by Postgres if it idles
 * PROJECTION_IDLE_TIMEOUT_MS.
 */
export const projectionLockStatement = (projection: Pick<Projection, 'name'>): string =>
  `select set_config('idle_in_transaction_session_timeout', '${PROJECTION_IDLE_TIMEOUT_MS}', true), ` +
  `pg_advisory_xact_lock(hashtext(${pg.escapeLiteral(projectionLockKey(projection))}))`;

/** The consumer group of a projection's schema: named by the schema's generation, so a fresh schema reads from offset 0. */
export const projectionGroupId = (namespace: string, projection: Pick<Projection, 'name'>, generation: string): string =>
  namespaced(namespace, `commerce-ledger.projection.${projection.name}.${generation}`);

type DecodedBatch = { batch: FetchedBatch; events: RecordedEvent[] };

/** A projection of a runner, with the schema it writes and the namespaced topics it reads. */
type Member = { projection: Projection; schema: string; topics: ReadonlySet<string> };

/** The topics a projection reads, in an order of their own: equal for projections that read the same ones. */
const topicSet = (projection: Projection): string =>
  projection.topics
    .map((topic) => topic.name)
    .sort()
    .join(',');

/**
 * Projections share a runner (one consumer, one decode of each event and one Postgres transaction per group of batches
 * for all of them) when they name the same `runner`, or else read the same topics.
 */
export function projectionGroups(projections: readonly Projection[]): Projection[][] {
  const groups = new Map<string, Projection[]>();
  for (const projection of projections) {
    const key = projection.runner ? `runner:${projection.runner}` : `topics:${topicSet(projection)}`;
    groups.set(key, [...(groups.get(key) ?? []), projection]);
  }
  return [...groups.values()];
}

/** How a runner fetches: gathered (GATHERED_FETCH) only where every member asks for it, else promptly. */
export function fetchOf(projections: readonly Projection[]): FetchSettings {
  return projections.every((p) => p.fetch === 'gathered') ? GATHERED_FETCH : PROMPT_FETCH;
}

/** The name of a group of projections (of one projection: its name), for its part, its log and its consumer group. */
export const groupName = (projections: readonly Pick<Projection, 'name'>[]): string => projections.map((p) => p.name).join('+');

/** How a group is applied: as one batch per member, or as one-event batches (which can name the failing event). */
type Mode = 'whole' | 'event-by-event';

const partitionKey = (topic: string, partition: number) => `${topic}|${partition}`;

/**
 * Applies a projection batch by batch: the events and the new checkpoint commit in one Postgres
 * transaction, and an event at or below the checkpoint is skipped, so redelivery never applies twice.
 */
export class ProjectionRunner {
  private readonly members: Member[];
  private consumer?: GroupConsumer;
  private commits?: PeriodicCommit;
  /** By partition (`partitionKey`): its topic and the events behind the log's end at its last batch. */
  private readonly lag = new Map<string, { topic: string; lag: number }>();
  private readonly group = new GroupCommit<FetchedBatch>((batches) => this.applyBatches(batches));
  private readonly log: ThrottledLog;
  private readonly statistics: FirstStatistics;

  private readonly deps: RunnerDeps;
  private readonly options: RunnerOptions;
  private readonly signals: PartSignals;

  /** `projection`: one projection, or a group of projections (see `projectionGroups`). */
  constructor(deps: RunnerDeps, projection: Projection | readonly Projection[], options: RunnerOptions, signals: PartSignals) {
    this.deps = deps;
    this.options = options;
    this.signals = signals;

    const [first, ...others] = Array.isArray(projection) ? projection : [projection as Projection];
    if (!first) throw new Error('a projection runner needs a projection');
    const member = (p: Projection, schema: string): Member => ({
      projection: p,
      schema,
      topics: new Set(p.topics.map((topic) => namespaced(deps.namespace, topic.name))),
    });
    this.members = [member(first, options.schema), ...others.map((p) => member(p, liveSchema(p)))];
    this.log = new ThrottledLog(deps.logger.child({ component: `projection-${groupName(this.projections)}`, schema: options.schema }));
    this.statistics = new FirstStatistics(
      deps.pool,
      this.members.map((m) => m.schema),
      (error) => this.log.write('warn', 'first-statistics', { err: errorField(error) }, 'could not give a table its first statistics'),
    );
  }

  private get projections(): Projection[] {
    return this.members.map((member) => member.projection);
  }

  async start(): Promise<void> {
    const { kafka, db, namespace } = this.deps;
    const generations: string[] = [];
    for (const { projection, schema } of this.members) generations.push(await prepareProjectionSchema(db, projection, schema));
    // A fresh schema gets a fresh generation and so a fresh consumer group that reads from offset 0.
    const groupId = projectionGroupId(namespace, { name: groupName(this.projections) }, generations.join('+'));
    // The checkpoints in Postgres are the projection's position (what it re-reads after a restart is skipped by
    // them); the group's offsets only shorten that re-read, so they are committed every few seconds, not per batch.
    const { consumer, commits, start } = periodicallyCommitting(
      kafka,
      {
        groupId,
        topics: [...new Set(this.members.flatMap((member) => [...member.topics]))],
        fetch: fetchOf(this.projections),
        ...(kafka.instanceId ? { instanceId: kafka.instanceId } : {}),
        eachBatch: async (batch) => {
          this.lag.set(partitionKey(batch.topic, batch.partition), {
            topic: batch.topic,
            lag: Math.max(0, Number(BigInt(batch.highWatermark) - BigInt(batch.lastOffset()) - 1n)),
          });
          if (batch.messages.length > 0) await this.group.submit(batch);
          // A batch of only transaction markers moves the checkpoint over them too, so an idle projection's checkpoint
          // equals the end of the log and rebuilds can compare positions.
          else
            await this.advance(batch.topic, batch.partition, batch.lastOffset()).catch((error: unknown) =>
              this.log.write('warn', 'advance', { err: errorField(error) }, 'could not advance the checkpoint over transaction markers'),
            );
        },
      },
      this.signals,
      (error) =>
        this.log.write(
          'warn',
          'offset-commit',
          { err: errorField(error) },
          'group offsets not committed (the checkpoints are the position)',
        ),
    );
    this.consumer = consumer;
    this.commits = commits;
    await start();
  }

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    await this.commits?.stop();
    this.commits = undefined;
    await consumer?.stop().catch(() => undefined);
    await this.statistics.settled();
  }

  /**
   * Events behind the end of the log at the last batch, summed over partitions (what readiness bounds): of the topics of
   * the member named, or of all the runner reads.
   */
  lagBehind(projection?: string): number {
    const members = this.members.filter((member) => projection === undefined || member.projection.name === projection);
    if (members.length === 0) throw new Error(`projection ${projection} is not a member of this runner`);
    let sum = 0;
    for (const { topic, lag } of this.lag.values()) {
      if (members.some((member) => member.topics.has(topic))) sum += Number.isFinite(lag) ? lag : 0;
    }
    return sum;
  }

  private async advance(topic: string, partition: number, offset: string): Promise<void> {
    await this.inTransaction([{ topic, partition, offset }], async () => []);
    this.options.onBatch?.(topic, partition, offset);
  }

  /**
   * Begins a transaction, takes each member's lock, then reads every checkpoint of its schema (a few rows: one per
   * partition read), in one round trip: the statements of one simple query, each read with a snapshot
   * taken once its lock is held. The locks are taken in the members' order, the same in every runner and replay.
   */
  private async beginAndReadCheckpoints(sql: ClientBase): Promise<Map<string, bigint>[]> {
    const statements = this.members.flatMap(({ projection, schema }) => [
      projectionLockStatement(projection),
      `select topic, partition, "offset" from ${pg.escapeIdentifier(schema)}.checkpoints`,
    ]);
    const results = (await sql.query(`begin; ${statements.join(';\n')}`)) as unknown as QueryResult<{
      topic: string;
      partition: number;
      offset: string;
    }>[];
    const reads = results.slice(1).filter((_, index) => index % 2 === 1);
    return reads.map(({ rows }) => new Map(rows.map((row) => [partitionKey(row.topic, row.partition), BigInt(row.offset)])));
  }

  /**
   * The statement that saves the checkpoints (only ever forward) and, for the live read model, announces them (each
   * notification is delivered when the transaction commits). Its values are literals, so that it can share a simple
   * query with the `commit` that follows it.
   */
  private checkpointStatement(positions: { topic: string; partition: number; offset: string }[]): string {
    return this.members
      .map((member) => this.memberCheckpointStatement(member, positions))
      .filter((statement) => statement !== undefined)
      .join(';\n');
  }

  /** A member's checkpoints are of its own topics only: none when the positions are all of its partners' topics. */
  private memberCheckpointStatement(
    { projection, schema, topics: own }: Member,
    positions: { topic: string; partition: number; offset: string }[],
  ): string | undefined {
    const { notify } = this.options;
    positions = positions.filter(({ topic }) => own.has(topic));
    if (positions.length === 0) return undefined;
    // One row per partition: an upsert may not touch the same row twice.
    const furthest = new Map<string, { topic: string; partition: number; offset: bigint }>();
    for (const { topic, partition, offset } of positions) {
      const key = partitionKey(topic, partition);
      const seen = furthest.get(key);
      if (!seen || BigInt(offset) > seen.offset) furthest.set(key, { topic, partition, offset: BigInt(offset) });
    }
    const saved = [...furthest.values()];
    const topics = saved.map((p) => pg.escapeLiteral(p.topic)).join(', ');
    const partitions = saved.map((p) => String(Math.trunc(p.partition))).join(', ');
    const offsets = saved.map((p) => p.offset.toString()).join(', ');
    const upsert = `insert into ${pg.escapeIdentifier(schema)}.checkpoints (topic, partition, "offset")
      select * from unnest(array[${topics}]::text[], array[${partitions}]::int[], array[${offsets}]::bigint[])
      on conflict (topic, partition) do update set "offset" = greatest(checkpoints."offset", excluded."offset"), updated_at = now()
      returning topic, partition, "offset"`;
    if (!notify) return upsert;
    const prefix = pg.escapeLiteral(`${projection.name}|`);
    return `with saved as (${upsert})
      select pg_notify(${pg.escapeLiteral(PROGRESS_CHANNEL)}, ${prefix} || topic || '|' || partition || '|' || "offset") from saved`;
  }

  /**
   * One transaction of the projection on a connection of the pool, in two round trips besides `work`'s reads: `begin`
   * with the lock and the checkpoints, and the new checkpoints with `commit`, after the writes `work` held (knex's
   * transactions spend a round trip each on `begin` and `commit`, and every write its own).
   */
  private async inTransaction(
    positions: { topic: string; partition: number; offset: string }[],
    work: (holding: HoldingConnection, applied: Map<string, bigint>[]) => Promise<string[]>,
  ): Promise<void> {
    await withPooledConnection(this.deps.pool, async (sql) => {
      const applied = await this.beginAndReadCheckpoints(sql);
      const holding = holdingWrites(sql);
      const notices = await work(holding, applied);
      // The keys after the checkpoints: a waiter that has heard of a key has heard of the positions its events reached.
      await sql.query([...holding.take(), this.checkpointStatement(positions), ...notices, 'commit'].filter(Boolean).join(';\n'));
    });
  }

  /**
   * The statements that announce, at commit, the await keys of the events each member applied (live read model only;
   * members without `awaitKeyOf` announce none).
   */
  private keyNotices(applied: Map<Member, RecordedEvent[]>): string[] {
    if (!this.options.notify) return [];
    const notices: string[] = [];
    for (const [{ projection }, events] of applied) {
      const keyOf = projection.awaitKeyOf;
      if (!keyOf) continue;
      const keys = new Set<string>();
      for (const event of events) {
        const key = keyOf(event);
        if (key !== undefined) keys.add(key.toLowerCase());
      }
      let chunk: string[] = [];
      let chars = 0;
      const announce = () => {
        if (chunk.length === 0) return;
        const payload = `${projection.name}|${chunk.join(',')}`;
        notices.push(`select pg_notify(${pg.escapeLiteral(KEYS_CHANNEL)}, ${pg.escapeLiteral(payload)})`);
        chunk = [];
        chars = 0;
      };
      for (const key of keys) {
        if (chars + key.length + 1 > KEYS_NOTICE_CHARS) announce();
        chunk.push(key);
        chars += key.length + 1;
      }
      announce();
    }
    return notices;
  }

  /**
   * One Postgres transaction for a group of batches, each skipping what its checkpoint has already seen, each member
   * handling its events as one batch. Should that fail, the group is applied again in a fresh transaction as one-event
   * batches, which either names the event that cannot be applied (`ProjectionEventError`) or, if every event applies,
   * commits the group all the same.
   */
  private async applyBatches(batches: FetchedBatch[]): Promise<void> {
    const decoded = await this.decode(batches);
    try {
      await this.applyGroup(decoded, 'whole');
    } catch (error) {
      this.log.write('warn', 'batch-form', { err: errorField(error) }, 'the batch form failed; applying the group event by event');
      await this.applyGroup(decoded, 'event-by-event');
    }
    for (const { batch } of decoded) this.options.onBatch?.(batch.topic, batch.partition, batch.lastOffset());
    this.statistics.poke();
  }

  private async decode(batches: FetchedBatch[]): Promise<DecodedBatch[]> {
    const decoded: DecodedBatch[] = [];
    for (const batch of batches) {
      const events: RecordedEvent[] = [];
      for (const message of batch.messages) {
        if (!message.value) continue;
        events.push(
          await this.deps.codec.decode(message.value, { topic: batch.topic, partition: batch.partition, offset: message.offset }),
        );
      }
      decoded.push({ batch, events });
    }
    return decoded;
  }

  /** The group's events of the member's topics past their partitions' checkpoints (`applied`) that it handles, in log order. */
  private fresh(decoded: DecodedBatch[], applied: Map<string, bigint>, { projection, topics }: Member): RecordedEvent[] {
    const fresh: RecordedEvent[] = [];
    for (const { batch, events } of decoded) {
      if (!topics.has(batch.topic)) continue;
      const key = partitionKey(batch.topic, batch.partition);
      const checkpoint = applied.get(key) ?? -1n;
      for (const event of events) {
        if (BigInt(event.position.offset) > checkpoint && projection.canHandle.includes(event.type)) fresh.push(event);
      }
      // A later batch of the same partition sees the earlier one's checkpoint, as if each were saved in turn.
      const last = BigInt(batch.lastOffset());
      if (last > checkpoint) applied.set(key, last);
    }
    return fresh;
  }

  private async applyGroup(decoded: DecodedBatch[], mode: Mode): Promise<void> {
    const positions = decoded.map(({ batch }) => ({ topic: batch.topic, partition: batch.partition, offset: batch.lastOffset() }));
    await this.inTransaction(positions, async (holding, applied) => {
      const handled = new Map<Member, RecordedEvent[]>();
      for (const [index, member] of this.members.entries()) {
        const { projection, schema } = member;
        const context = projectionContext(this.deps.db, holding.sql, schema);
        const fresh = this.fresh(decoded, applied[index]!, member);
        if (fresh.length === 0) continue;
        handled.set(member, fresh);
        if (mode === 'whole') {
          await projection.handle(fresh, context);
          continue;
        }
        for (const event of fresh) {
          try {
            // Its held writes sent now, so that a failing one is laid at this event's door.
            await projection.handle([event], context);
            await holding.flush();
          } catch (error) {
            throw new ProjectionEventError(
              projection.name,
              { type: event.type, position: event.position, eventId: event.envelope.eventId },
              error,
            );
          }
        }
      }
      return this.keyNotices(handled);
    });
  }
}
