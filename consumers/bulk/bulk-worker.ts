import { bulkJobAggregate, type BulkItemFailure } from '../../commands/bulk/bulk-job.ts';
import { productAggregate } from '../../commands/catalog/product.ts';
import type { Aggregate } from '../../ledger/aggregate.ts';
import type { Command, CommandInput, Event, IdempotentRequest, LogPosition } from '../../ledger/message.ts';
import type { Worker, WorkerDeps } from '../../ledger/runtime.ts';
import { ownerOfRow, sendCommand } from '../../ledger/send-command.ts';
import { ItemQueue } from '../../ledger/item-queue.ts';
import { Permits } from '../../ledger/permits.ts';
import { errorField } from '../../ledger/throttled-log.ts';
import { defineWorker, type WorkerContext, type WorkerHooks } from '../../ledger/worker.ts';
import { bulkProjection } from '../../projections/bulk/bulk-projection.ts';
import { chunkHolding, unfinishedJobs, type WorkerJobRow } from '../../projections/bulk/bulk-queries.ts';
import { itemCommandId, planItem, refusedItem, type ItemPlan } from '../../commands/bulk/bulk-items.ts';

const IDLE_POLL_MS = 5_000;

export type BulkWorkerOptions = {
  /** Items whose outcomes one RecordBulkItems reports (and so the step by which processed_items moves). */
  sliceItems: number;
  /**
   * Slices whose commands are out at once, all jobs together (one job may have them all); each job's outcomes are still
   * recorded in order.
   */
  slicesInFlight: number;
  /** Jobs worked on side by side, so one tenant's large job does not hold another's back. */
  jobsAtOnce: number;
};

type Job = WorkerJobRow;
type Slice = { firstIndex: number; items: unknown[] };
type SliceOutcome = { firstIndex: number; count: number; succeeded: number; failures: BulkItemFailure[] };

/**
 * The bulk processor (issue 13): starts each submitted job, turns its items into ordinary product commands slice by
 * slice, and records every slice's outcomes on the job in order. Its position is the job's own record (the items it
 * has recorded), so after a crash it resumes at the first slice not recorded; a slice sent again is answered by the
 * product aggregates as the first time (each item's command is idempotent under a key of job and item).
 */
class BulkWorker {
  /** The next item of each job this process has recorded, ahead of a read model that may lag. */
  private readonly recorded = new Map<string, number>();
  private readonly deps: WorkerDeps;
  /** One permit per slice out, shared by the jobs worked on side by side: their items in flight stay those of one job. */
  private readonly slices: Permits;

  private readonly context: WorkerContext;
  private readonly options: BulkWorkerOptions;

  constructor(context: WorkerContext, options: BulkWorkerOptions) {
    this.context = context;
    this.options = options;

    this.deps = context.deps;
    this.slices = new Permits(options.slicesInFlight);
  }

  /** The unfinished jobs side by side, taken round-robin across tenants, each worked on until it ends. */
  hooks(): WorkerHooks {
    return new ItemQueue(this.context, 'bulk-worker', this.options.jobsAtOnce, {
      queue: (limit) => unfinishedJobs(this.deps.db, limit),
      keyOf: (job: Job) => job.id,
      ownerOf: (job) => job.tenant_id,
      work: (job) => this.work(job),
    }).hooks({});
  }

  /** One job until it ends (true), the worker stops, or something fails (false: the queue comes back to it). */
  private async work(job: Job): Promise<boolean> {
    try {
      if (job.status === 'PENDING') await this.send(job, bulkJobAggregate, { type: 'StartBulkJob', data: { jobId: job.id } });
      const total = job.item_count;
      const readModelAt = (job.processed_items ?? 0) + (job.failed_items ?? 0);
      const from = Math.max(readModelAt, this.recorded.get(job.id) ?? 0);
      return await this.process(job, from, total);
    } catch (error) {
      this.context.throttled.write(
        'warn',
        'bulk-job',
        { err: errorField(error), jobId: job.id },
        'bulk job interrupted; it resumes where it stopped',
      );
      return false;
    }
  }

  /**
   * Slices from `from` on, each recorded once those before it are: each slice out holds a permit until its outcome is
   * recorded; a job with none out waits for one, a job with some takes another only if one is free and no job waits.
   */
  private async process(job: Job, from: number, total: number): Promise<boolean> {
    const pending: Promise<SliceOutcome>[] = [];
    const reader = new ChunkReader(this.deps, job.id);
    let next = from;
    let held = 0;
    try {
      while (!this.context.stopping() && (next < total || pending.length > 0)) {
        while (next < total && !this.context.stopping()) {
          if (pending.length === 0) await this.slices.take();
          else if (!this.slices.tryTake()) break;
          held++;
          if (this.context.stopping()) break;
          const slice = await reader.slice(next, Math.min(this.options.sliceItems, total - next));
          const applying = this.applySlice(job, slice);
          // Awaited in order below; one that fails while an earlier one is awaited must not go unhandled meanwhile.
          applying.catch(() => undefined);
          pending.push(applying);
          next += slice.items.length;
        }
        if (pending.length === 0) break;
        const outcome = await (pending.shift() as Promise<SliceOutcome>);
        await this.send(job, bulkJobAggregate, { type: 'RecordBulkItems', data: { jobId: job.id, ...outcome } });
        this.recorded.set(job.id, outcome.firstIndex + outcome.count);
        held--;
        this.slices.release();
      }
    } finally {
      await Promise.allSettled(pending);
      this.slices.release(held);
    }
    const ended = next >= total && pending.length === 0;
    if (ended) this.recorded.delete(job.id);
    return ended;
  }

  /**
   * A slice's items, then its outcome once the read models show them: a job recorded COMPLETED is one whose products
   * every list and read already shows (a reader of the job's status reads its writes).
   */
  private async applySlice(job: Job, { firstIndex, items }: Slice): Promise<SliceOutcome> {
    const plans = items.map((item, offset) => planItem(job.job_type, job.id, firstIndex + offset, item));
    const outcomes = await Promise.all(plans.map((plan) => this.applyItem(job, plan)));
    await this.deps.readModelsAt(furthest(outcomes.flatMap((outcome) => outcome.positions)));
    const failures = outcomes.flatMap((outcome) => (outcome.failure ? [outcome.failure] : []));
    return { firstIndex, count: items.length, succeeded: items.length - failures.length, failures };
  }

  private async applyItem(job: Job, plan: ItemPlan): Promise<{ failure?: BulkItemFailure; positions: LogPosition[] }> {
    if (plan.kind === 'failed') return { failure: plan.failure, positions: [] };
    const reply = await this.send(job, productAggregate, plan.command, plan.idempotency, itemCommandId(job.id, plan.index), false);
    return reply.outcome === 'rejected'
      ? { failure: refusedItem(plan.index, plan.productId, reply.error), positions: [] }
      : { positions: reply.positions };
  }

  /** Sends a command as the job's creator and waits for its decision; a refusal throws unless the caller judges it. */
  private send<C extends Command, E extends Event, S>(
    job: Job,
    aggregate: Aggregate<C, E, S>,
    input: CommandInput<NoInfer<C>>,
    idempotency?: IdempotentRequest,
    commandId?: string,
    refusalThrows = true,
  ) {
    return sendCommand(this.deps.bus, ownerOfRow(job), aggregate, input, { correlationId: job.id, idempotency, commandId, refusalThrows });
  }
}

/** A job's items as the read model holds them, one parsed chunk at a time (slices never cross a chunk). */
class ChunkReader {
  private current?: { firstIndex: number; items: unknown[] };

  private readonly deps: WorkerDeps;
  private readonly jobId: string;

  constructor(deps: WorkerDeps, jobId: string) {
    this.deps = deps;
    this.jobId = jobId;
  }

  async slice(firstIndex: number, most: number): Promise<Slice> {
    const current = this.current;
    const holds = current && firstIndex >= current.firstIndex && firstIndex < current.firstIndex + current.items.length;
    if (!holds) {
      const chunk = await chunkHolding(this.deps.db, this.jobId, firstIndex);
      if (!chunk || chunk.first_index + chunk.item_count <= firstIndex)
        throw new Error(`bulk job ${this.jobId} has no item ${firstIndex} yet`);
      this.current = { firstIndex: chunk.first_index, items: JSON.parse(chunk.items) as unknown[] };
    }
    const { firstIndex: base, items } = this.current as { firstIndex: number; items: unknown[] };
    const start = firstIndex - base;
    return { firstIndex, items: items.slice(start, Math.min(items.length, start + most)) };
  }
}

export const bulkWorker = (options: BulkWorkerOptions): Worker =>
  defineWorker({
    name: 'bulk',
    component: 'bulk-worker',
    source: { kind: 'queue', wokenBy: [bulkProjection.name], idlePollMs: IDLE_POLL_MS },
    hooks: (context) => new BulkWorker(context, options).hooks(),
  });

/** The furthest of the positions in each topic partition: what a read model showing them all must have applied. */
const furthest = (positions: LogPosition[]): LogPosition[] => {
  const byPartition = new Map<string, LogPosition>();
  for (const position of positions) {
    const key = `${position.topic}|${position.partition}`;
    const known = byPartition.get(key);
    if (!known || BigInt(position.offset) > BigInt(known.offset)) byPartition.set(key, position);
  }
  return [...byPartition.values()];
};
