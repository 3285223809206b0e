import type { Batch, Consumer, Kafka } from 'kafkajs';
import type { Knex } from 'knex';
import type { EventCodec } from './event-codec.ts';
import { GroupCommit, groupCommitRun } from './group-commit.ts';
import { supervisedConsumer } from './kafka.ts';
import type { Logger } from './logger.ts';
import type { RecordedEvent } from './message.ts';
import { contextFor, prepareProjectionSchema, type Projection } from './projection.ts';
import type { PartSignals } from './supervisor.ts';
import { errorField, ThrottledLog } from './throttled-log.ts';
import { namespaced } from './topics.ts';

export const PROGRESS_CHANNEL = 'ledger_projection_progress';

export type RunnerDeps = { kafka: Kafka; codec: EventCodec; db: Knex; namespace: string; logger: Logger };

export type RunnerOptions = {
  schema: string;
  /** Only the live read model announces its progress to waiting writers. */
  notify: boolean;
  onBatch?: (topic: string, partition: number, offset: string) => void;
};

/** An event a projection could not apply, with where it sits in the log: the one line an operator needs to find it. */
export class ProjectionEventError extends Error {
  constructor(
    readonly projection: string,
    readonly event: Pick<RecordedEvent, 'type' | 'position'> & { eventId: string },
    // Not `cause`: the log keeps this error's message, with the coordinates, rather than digging past it.
    readonly failure: unknown,
  ) {
    const { topic, partition, offset } = event.position;
    super(`projection ${projection} cannot apply ${event.type} at ${topic}/${partition}@${offset}: ${errorField(failure).message}`);
    this.name = 'ProjectionEventError';
  }
}

export const projectionLockKey = (projection: Pick<Projection, 'name'>): string => `projection:${projection.name}`;

/**
 * Applies a projection batch by batch: the events and the new checkpoint commit in one Postgres
 * transaction, and an event at or below the checkpoint is skipped, so redelivery never applies twice.
 */
export class ProjectionRunner {
  private consumer?: Consumer;
  private readonly lag = new Map<string, number>();
  private readonly group = new GroupCommit<Batch>((batches) => this.applyBatches(batches));
  private readonly log: ThrottledLog;

  constructor(
    private readonly deps: RunnerDeps,
    private readonly projection: Projection,
    private readonly options: RunnerOptions,
    private readonly signals: PartSignals,
  ) {
    this.log = new ThrottledLog(deps.logger.child({ component: `projection-${projection.name}`, schema: options.schema }));
  }

  async start(): Promise<void> {
    const { kafka, db, namespace } = this.deps;
    const generation = await prepareProjectionSchema(db, this.projection, this.options.schema);
    // A fresh schema gets a fresh generation and so a fresh consumer group that reads from offset 0.
    const groupId = namespaced(namespace, `commerce-ledger.projection.${this.projection.name}.${generation}`);
    const consumer = supervisedConsumer(kafka, { groupId, readUncommitted: false, maxWaitTimeInMs: 100 }, this.signals);
    this.consumer = consumer;
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      this.lag.set(`${payload.topic}|${payload.partition}`, Number(payload.offsetLag));
      // Batches of only transaction markers never reach eachBatch; move the checkpoint over them too,
      // so an idle projection's checkpoint equals the end of the log and rebuilds can compare positions.
      if (payload.batchSize > 0) return;
      this.advance(payload.topic, payload.partition, payload.lastOffset).catch((error: unknown) =>
        this.log.write('warn', 'advance', { err: errorField(error) }, 'could not advance the checkpoint over transaction markers'),
      );
    });
    await consumer.connect();
    for (const topic of this.projection.topics) {
      await consumer.subscribe({ topic: namespaced(namespace, topic.name), fromBeginning: true });
    }
    await consumer.run(groupCommitRun(this.group, { autoCommit: true }));
  }

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    await consumer?.disconnect().catch(() => undefined);
  }

  /** Events behind the end of the log at the last batch, summed over partitions (what readiness bounds). */
  lagBehind(): number {
    let sum = 0;
    for (const lag of this.lag.values()) sum += Number.isFinite(lag) ? lag : 0;
    return sum;
  }

  private async advance(topic: string, partition: number, offset: string): Promise<void> {
    await this.deps.db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [projectionLockKey(this.projection)]);
      await this.saveCheckpoint(trx, topic, partition, offset);
    });
    this.options.onBatch?.(topic, partition, offset);
  }

  /** Checkpoints only move forward; the notification is delivered when the transaction commits. */
  private async saveCheckpoint(trx: Knex.Transaction, topic: string, partition: number, offset: string): Promise<void> {
    const { schema, notify } = this.options;
    const [row] = (
      await trx.raw(
        `insert into ??.checkpoints (topic, partition, "offset") values (?, ?, ?)
       on conflict (topic, partition) do update set "offset" = greatest(checkpoints."offset", excluded."offset"), updated_at = now()
       returning "offset"`,
        [schema, topic, partition, offset],
      )
    ).rows as { offset: string }[];
    if (notify && row)
      await trx.raw('select pg_notify(?, ?)', [PROGRESS_CHANNEL, `${this.projection.name}|${topic}|${partition}|${row.offset}`]);
  }

  /** One Postgres transaction for a group of batches, each skipping what its checkpoint has already seen. */
  private async applyBatches(batches: Batch[]): Promise<void> {
    const { codec, db } = this.deps;
    const { schema } = this.options;
    const decoded: { batch: Batch; events: RecordedEvent[] }[] = [];
    for (const batch of batches) {
      const events: RecordedEvent[] = [];
      for (const message of batch.messages) {
        if (!message.value) continue;
        events.push(await codec.decode(message.value, { topic: batch.topic, partition: batch.partition, offset: message.offset }));
      }
      decoded.push({ batch, events });
    }
    await db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [projectionLockKey(this.projection)]);
      const context = contextFor(trx, schema);
      for (const { batch, events } of decoded) {
        const checkpoint = (await trx(`${schema}.checkpoints`)
          .where({ topic: batch.topic, partition: batch.partition })
          .first('offset')) as { offset: string } | undefined;
        const applied = checkpoint ? BigInt(checkpoint.offset) : -1n;
        for (const event of events) {
          if (BigInt(event.position.offset) <= applied || !this.projection.canHandle.includes(event.type)) continue;
          try {
            await this.projection.evolve(event, context);
          } catch (error) {
            throw new ProjectionEventError(
              this.projection.name,
              { type: event.type, position: event.position, eventId: event.envelope.eventId },
              error,
            );
          }
        }
        await this.saveCheckpoint(trx, batch.topic, batch.partition, batch.lastOffset());
      }
    });
    for (const { batch } of decoded) this.options.onBatch?.(batch.topic, batch.partition, batch.lastOffset());
  }
}
