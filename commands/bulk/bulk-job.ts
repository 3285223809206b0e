import { defineAggregate } from '../../ledger/aggregate.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';

/**
 * A bulk job (spec: "Bulk job"): its payload arrives as chunks of items, each one event no larger than a record
 * (BulkItemsAttached), then the job is submitted (PENDING). The bulk worker starts it (PROCESSING) and records its
 * items' outcomes slice by slice, in order; the slice that reaches the last item ends it, COMPLETED when every item
 * was applied and FAILED when any was not (docs/decisions.md, "Bulk jobs").
 */
export type BulkJobType = 'BULK_IMPORT' | 'BULK_UPDATE' | 'BULK_DELETE';
export const bulkJobTypes: BulkJobType[] = ['BULK_IMPORT', 'BULK_UPDATE', 'BULK_DELETE'];

/** Why an item was not applied: `code` as the job's item errors and the validation issue name it. */
export type BulkItemFailure = { index: number; code: string; message: string; productId: string | null };

// ── Events ──────────────────────────────────────────────────────────────────
/** `items`: the chunk's items as the client sent them, a JSON array in text (Avro does not model their fields). */
export type BulkItemsAttached = Event<
  'BulkItemsAttached',
  { jobId: string; chunk: number; firstIndex: number; itemCount: number; items: string }
>;
export type BulkJobSubmitted = Event<
  'BulkJobSubmitted',
  { jobId: string; jobType: BulkJobType; totalItems: number; chunkCount: number; payloadBytes: number }
>;
export type BulkJobStarted = Event<'BulkJobStarted', { jobId: string; totalItems: number }>;
/** Items `firstIndex` .. `firstIndex + count - 1`: `succeeded` of them applied, the others listed in `failures`. */
export type BulkItemsProcessed = Event<
  'BulkItemsProcessed',
  { jobId: string; firstIndex: number; count: number; succeeded: number; failures: BulkItemFailure[] }
>;
export type BulkJobCompleted = Event<'BulkJobCompleted', { jobId: string; processedItems: number }>;
export type BulkJobFailed = Event<'BulkJobFailed', { jobId: string; processedItems: number; failedItems: number }>;

export type BulkJobEvent = BulkItemsAttached | BulkJobSubmitted | BulkJobStarted | BulkItemsProcessed | BulkJobCompleted | BulkJobFailed;

// ── State ───────────────────────────────────────────────────────────────────
type Progress = { jobType: BulkJobType; totalItems: number; chunkCount: number; nextIndex: number; succeeded: number; failed: number };
export type BulkJob =
  | { status: 'Empty' }
  | { status: 'Attaching'; chunks: number; items: number }
  | ({ status: 'Pending' | 'Processing' | 'Completed' | 'Failed' } & Progress);

export const initialState = (): BulkJob => ({ status: 'Empty' });

export const evolve = (state: BulkJob, event: BulkJobEvent): BulkJob => {
  switch (event.type) {
    case 'BulkItemsAttached': {
      const before = state.status === 'Attaching' ? state : { chunks: 0, items: 0 };
      return { status: 'Attaching', chunks: before.chunks + 1, items: before.items + event.data.itemCount };
    }
    case 'BulkJobSubmitted': {
      const { jobType, totalItems, chunkCount } = event.data;
      return { status: 'Pending', jobType, totalItems, chunkCount, nextIndex: 0, succeeded: 0, failed: 0 };
    }
    case 'BulkJobStarted':
      return state.status === 'Pending' ? { ...state, status: 'Processing' } : state;
    case 'BulkItemsProcessed': {
      if (state.status !== 'Processing') return state;
      const { count, succeeded, failures } = event.data;
      return {
        ...state,
        nextIndex: state.nextIndex + count,
        succeeded: state.succeeded + succeeded,
        failed: state.failed + failures.length,
      };
    }
    case 'BulkJobCompleted':
      return state.status === 'Processing' ? { ...state, status: 'Completed' } : state;
    case 'BulkJobFailed':
      return state.status === 'Processing' ? { ...state, status: 'Failed' } : state;
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
export type AttachBulkItems = Command<'AttachBulkItems', BulkItemsAttached['data']>;
export type SubmitBulkJob = Command<'SubmitBulkJob', BulkJobSubmitted['data']>;
export type StartBulkJob = Command<'StartBulkJob', { jobId: string }>;
export type RecordBulkItems = Command<'RecordBulkItems', BulkItemsProcessed['data']>;

export type BulkJobCommand = AttachBulkItems | SubmitBulkJob | StartBulkJob | RecordBulkItems;

// ── Decide ──────────────────────────────────────────────────────────────────
const notFound = (jobId: string) => new NotFoundError(`bulk job ${jobId} not found`);
const invalid = (message: string) => new ValidationError(message, [{ path: 'data', message }]);

/** Chunks come in order; a chunk already attached (a retried request) changes nothing. */
const attach = ({ data }: AttachBulkItems, state: BulkJob): BulkJobEvent[] => {
  if (state.status !== 'Empty' && state.status !== 'Attaching') {
    // The retry of a submission (Idempotency-Key) attaches its chunks again: the submission itself is judged.
    if (data.chunk < state.chunkCount) return [];
    throw new ConflictError(`bulk job ${data.jobId} is already submitted`);
  }
  const attached = state.status === 'Attaching' ? state : { chunks: 0, items: 0 };
  if (data.chunk < attached.chunks) return [];
  if (data.chunk > attached.chunks || data.firstIndex !== attached.items) {
    throw new ConflictError(`bulk job ${data.jobId} expects chunk ${attached.chunks} at item ${attached.items}`);
  }
  if (data.itemCount < 1) throw invalid('a chunk holds at least one item');
  return [{ type: 'BulkItemsAttached', data }];
};

/** Submitted only whole: every chunk it announces attached, holding every item it counts. */
const submit = ({ data }: SubmitBulkJob, state: BulkJob): BulkJobEvent[] => {
  if (state.status === 'Empty') throw notFound(data.jobId);
  if (state.status !== 'Attaching') return [];
  if (state.chunks !== data.chunkCount || state.items !== data.totalItems) {
    throw new ConflictError(
      `bulk job ${data.jobId} holds ${state.chunks} chunks of ${state.items} items, not ${data.chunkCount} of ${data.totalItems}`,
    );
  }
  return [{ type: 'BulkJobSubmitted', data }];
};

const start = ({ data }: StartBulkJob, state: BulkJob): BulkJobEvent[] => {
  if (state.status === 'Empty' || state.status === 'Attaching') throw notFound(data.jobId);
  if (state.status !== 'Pending') return [];
  return [{ type: 'BulkJobStarted', data: { jobId: data.jobId, totalItems: state.totalItems } }];
};

/** Slices are recorded in order, each once: a slice already recorded (the worker retried it) changes nothing. */
const record = ({ data }: RecordBulkItems, state: BulkJob): BulkJobEvent[] => {
  if (state.status === 'Empty' || state.status === 'Attaching') throw notFound(data.jobId);
  if (state.status === 'Completed' || state.status === 'Failed') return [];
  if (state.status !== 'Processing') throw new ConflictError(`bulk job ${data.jobId} is not processing`);
  if (data.firstIndex < state.nextIndex) return [];
  if (data.firstIndex > state.nextIndex) throw new ConflictError(`bulk job ${data.jobId} expects item ${state.nextIndex} next`);
  const end = data.firstIndex + data.count;
  const within = (index: number) => index >= data.firstIndex && index < end;
  if (data.count < 1 || end > state.totalItems) throw invalid('the slice is outside the job');
  if (data.succeeded + data.failures.length !== data.count || !data.failures.every((f) => within(f.index))) {
    throw invalid('every item of the slice either succeeded or failed');
  }
  const processed: BulkJobEvent = { type: 'BulkItemsProcessed', data };
  if (end < state.totalItems) return [processed];
  const processedItems = state.succeeded + data.succeeded;
  const failedItems = state.failed + data.failures.length;
  const ended: BulkJobEvent =
    failedItems === 0
      ? { type: 'BulkJobCompleted', data: { jobId: data.jobId, processedItems } }
      : { type: 'BulkJobFailed', data: { jobId: data.jobId, processedItems, failedItems } };
  return [processed, ended];
};

export const decide = (command: BulkJobCommand, state: BulkJob): BulkJobEvent[] => {
  switch (command.type) {
    case 'AttachBulkItems':
      return attach(command, state);
    case 'SubmitBulkJob':
      return submit(command, state);
    case 'StartBulkJob':
      return start(command, state);
    case 'RecordBulkItems':
      return record(command, state);
    default: {
      const exhaustive: never = command;
      throw new Error(`unknown command ${JSON.stringify(exhaustive)}`);
    }
  }
};

export const bulkJobDecider: Decider<BulkJobCommand, BulkJobEvent, BulkJob> = { initialState, evolve, decide };

export const bulkJobAggregate = defineAggregate({
  name: 'bulk-job',
  stream: 'pim.bulk-job',
  decider: bulkJobDecider,
  id: 'jobId',
  events: {
    namespace: 'commerce.ledger.bulk',
    types: ['BulkItemsAttached', 'BulkJobSubmitted', 'BulkJobStarted', 'BulkItemsProcessed', 'BulkJobCompleted', 'BulkJobFailed'],
  },
});
