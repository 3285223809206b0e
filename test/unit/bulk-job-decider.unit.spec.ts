import { describe, expect, it } from 'vitest';
import {
  bulkJobDecider,
  evolve,
  initialState,
  type BulkItemFailure,
  type BulkJobCommand,
  type BulkJobEvent,
} from '../../commands/bulk/bulk-job.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(bulkJobDecider);

const jobId = '33333333-3333-4333-8333-333333333333';

/** Three chunks of 2, 3 and 1 items: 6 items in all. */
const sizes = [2, 3, 1];
const firstIndexes = [0, 2, 5];
const chunkData = (chunk: number) => ({
  jobId,
  chunk,
  firstIndex: firstIndexes[chunk] ?? 0,
  itemCount: sizes[chunk] ?? 1,
  items: JSON.stringify(Array.from({ length: sizes[chunk] ?? 1 }, (_, i) => ({ title: `T${chunk}.${i}` }))),
});
const attach = (chunk: number): WithoutMetadata<BulkJobCommand> => ({ type: 'AttachBulkItems', data: chunkData(chunk) });
const attached = (chunk: number): BulkJobEvent => ({ type: 'BulkItemsAttached', data: chunkData(chunk) });
const submission = { jobId, jobType: 'BULK_IMPORT' as const, totalItems: 6, chunkCount: 3, payloadBytes: 120 };
const submit = (data: Partial<typeof submission> = {}): WithoutMetadata<BulkJobCommand> => ({
  type: 'SubmitBulkJob',
  data: { ...submission, ...data },
});
const submitted: BulkJobEvent = { type: 'BulkJobSubmitted', data: submission };
const started: BulkJobEvent = { type: 'BulkJobStarted', data: { jobId, totalItems: 6 } };

const failure = (index: number, productId: string | null = null): BulkItemFailure => ({
  index,
  code: 'INVALID_FIELD',
  message: `item ${index}`,
  productId,
});
const slice = (firstIndex: number, count: number, failures: BulkItemFailure[] = []) => ({
  jobId,
  firstIndex,
  count,
  succeeded: count - failures.length,
  failures,
});
const record = (data: ReturnType<typeof slice>): WithoutMetadata<BulkJobCommand> => ({ type: 'RecordBulkItems', data });
const processed = (data: ReturnType<typeof slice>): BulkJobEvent => ({ type: 'BulkItemsProcessed', data });

const allAttached = [attached(0), attached(1), attached(2)];
const pending = [...allAttached, submitted];
const processing = [...pending, started];

describe('bulk job decider', () => {
  describe('attaching chunks', () => {
    it('attaches chunks in order', () => {
      given()
        .when(attach(0))
        .then([attached(0)]);
      given([attached(0)])
        .when(attach(1))
        .then([attached(1)]);
      given([attached(0), attached(1)])
        .when(attach(2))
        .then([attached(2)]);
      const { state } = given().whenInTurn([attach(0), attach(1), attach(2)]);
      expect(state).toEqual({ status: 'Attaching', chunks: 3, items: 6 });
    });

    it('changes nothing for a chunk already attached', () => {
      given([attached(0)])
        .when(attach(0))
        .thenNothingHappened();
      given(allAttached).when(attach(1)).thenNothingHappened();
      const { events, state } = given().whenInTurn([attach(0), attach(0), attach(1), attach(0), attach(1)]);
      expect(events).toEqual([[attached(0)], [], [attached(1)], [], []]);
      expect(state).toEqual({ status: 'Attaching', chunks: 2, items: 5 });
    });

    it('refuses a gap in the chunks or a first index that does not follow the items attached', () => {
      given().when(attach(1)).thenThrows(ConflictError);
      given([attached(0)])
        .when(attach(2))
        .thenThrows(ConflictError);
      given()
        .when({ type: 'AttachBulkItems', data: { ...chunkData(0), firstIndex: 1 } })
        .thenThrows(ConflictError);
      given([attached(0)])
        .when({ type: 'AttachBulkItems', data: { ...chunkData(1), firstIndex: 3 } })
        .thenThrows(ConflictError);
      given([attached(0)])
        .when({ type: 'AttachBulkItems', data: { ...chunkData(1), firstIndex: 1 } })
        .thenThrows(ConflictError);
    });

    it('refuses an empty chunk', () => {
      given()
        .when({ type: 'AttachBulkItems', data: { ...chunkData(0), itemCount: 0, items: '[]' } })
        .thenThrows(ValidationError);
      given([attached(0)])
        .when({ type: 'AttachBulkItems', data: { ...chunkData(1), itemCount: 0, items: '[]' } })
        .thenThrows(ValidationError);
    });

    it('after the submission, ignores a chunk of the job (a retried submission) and refuses one beyond it', () => {
      for (const history of [pending, processing]) {
        for (const chunk of [0, 1, 2]) given(history).when(attach(chunk)).thenNothingHappened();
        given(history)
          .when({ type: 'AttachBulkItems', data: { ...chunkData(2), chunk: 3, firstIndex: 6 } })
          .thenThrows(ConflictError);
        given(history)
          .when({ type: 'AttachBulkItems', data: { ...chunkData(2), chunk: 7, firstIndex: 6 } })
          .thenThrows(ConflictError);
      }
    });
  });

  describe('submitting', () => {
    it('submits a job whose chunks and items are all attached', () => {
      given(allAttached).when(submit()).then([submitted]);
      const { state } = given(allAttached).whenInTurn([submit()]);
      expect(state).toEqual({
        status: 'Pending',
        jobType: 'BULK_IMPORT',
        totalItems: 6,
        chunkCount: 3,
        nextIndex: 0,
        succeeded: 0,
        failed: 0,
      });
    });

    it('refuses a submission whose chunk or item count differs from what is attached', () => {
      given([attached(0), attached(1)])
        .when(submit())
        .thenThrows(ConflictError);
      given(allAttached)
        .when(submit({ chunkCount: 2 }))
        .thenThrows(ConflictError);
      given(allAttached)
        .when(submit({ chunkCount: 4 }))
        .thenThrows(ConflictError);
      given(allAttached)
        .when(submit({ totalItems: 5 }))
        .thenThrows(ConflictError);
      given(allAttached)
        .when(submit({ totalItems: 7 }))
        .thenThrows(ConflictError);
    });

    it('knows no job that has no chunk', () => {
      given().when(submit()).thenThrows(NotFoundError);
    });

    it('changes nothing when submitted again', () => {
      given(pending).when(submit()).thenNothingHappened();
      given(processing).when(submit()).thenNothingHappened();
      const { events } = given(allAttached).whenInTurn([submit(), submit()]);
      expect(events).toEqual([[submitted], []]);
    });
  });

  describe('starting', () => {
    it('starts a pending job once, naming its item count', () => {
      given(pending).when({ type: 'StartBulkJob', data: { jobId } }).then([started]);
      given(processing).when({ type: 'StartBulkJob', data: { jobId } }).thenNothingHappened();
      const { events, state } = given(pending).whenInTurn([
        { type: 'StartBulkJob', data: { jobId } },
        { type: 'StartBulkJob', data: { jobId } },
      ]);
      expect(events).toEqual([[started], []]);
      expect(state).toMatchObject({ status: 'Processing', totalItems: 6 });
    });

    it('knows no job before its submission', () => {
      given().when({ type: 'StartBulkJob', data: { jobId } }).thenThrows(NotFoundError);
      given(allAttached).when({ type: 'StartBulkJob', data: { jobId } }).thenThrows(NotFoundError);
    });
  });

  describe('recording items', () => {
    it('records slices in order', () => {
      given(processing)
        .when(record(slice(0, 2)))
        .then([processed(slice(0, 2))]);
      given([...processing, processed(slice(0, 2))])
        .when(record(slice(2, 3, [failure(3)])))
        .then([processed(slice(2, 3, [failure(3)]))]);
    });

    it('changes nothing for a slice already recorded', () => {
      const history = [...processing, processed(slice(0, 2)), processed(slice(2, 2))];
      given(history)
        .when(record(slice(0, 2)))
        .thenNothingHappened();
      given(history)
        .when(record(slice(2, 2)))
        .thenNothingHappened();
      given(history)
        .when(record(slice(3, 1)))
        .thenNothingHappened();
    });

    it('refuses a gap', () => {
      given(processing)
        .when(record(slice(1, 2)))
        .thenThrows(ConflictError);
      given([...processing, processed(slice(0, 2))])
        .when(record(slice(3, 2)))
        .thenThrows(ConflictError);
    });

    it('refuses a slice beyond the job, or whose items do not add up, or with a failure outside it', () => {
      given(processing)
        .when(record(slice(0, 7)))
        .thenThrows(ValidationError);
      given([...processing, processed(slice(0, 4))])
        .when(record(slice(4, 3)))
        .thenThrows(ValidationError);
      given(processing)
        .when(record(slice(0, 0)))
        .thenThrows(ValidationError);
      given(processing)
        .when(record({ ...slice(0, 2), succeeded: 2, failures: [failure(1)] }))
        .thenThrows(ValidationError);
      given(processing)
        .when(record({ ...slice(0, 3), succeeded: 1, failures: [failure(1)] }))
        .thenThrows(ValidationError);
      given(processing)
        .when(record(slice(0, 2, [failure(2)])))
        .thenThrows(ValidationError);
      given([...processing, processed(slice(0, 2))])
        .when(record(slice(2, 2, [failure(1)])))
        .thenThrows(ValidationError);
    });

    it('completes the job with its last slice when no item of the job failed', () => {
      given([...processing, processed(slice(0, 4))])
        .when(record(slice(4, 2)))
        .then([processed(slice(4, 2)), { type: 'BulkJobCompleted', data: { jobId, processedItems: 6 } }]);
      given(processing)
        .when(record(slice(0, 6)))
        .then([processed(slice(0, 6)), { type: 'BulkJobCompleted', data: { jobId, processedItems: 6 } }]);
    });

    it('fails the job with its last slice when any item of the job failed, counting over every slice', () => {
      // A failure in an earlier slice only.
      given([...processing, processed(slice(0, 2, [failure(0, jobId)])), processed(slice(2, 2))])
        .when(record(slice(4, 2)))
        .then([processed(slice(4, 2)), { type: 'BulkJobFailed', data: { jobId, processedItems: 5, failedItems: 1 } }]);
      // Failures in several slices, the last one among them.
      const { events, state } = given(processing).whenInTurn([
        record(slice(0, 2, [failure(0), failure(1)])),
        record(slice(2, 3, [failure(4)])),
        record(slice(5, 1, [failure(5)])),
      ]);
      expect(events).toEqual([
        [processed(slice(0, 2, [failure(0), failure(1)]))],
        [processed(slice(2, 3, [failure(4)]))],
        [processed(slice(5, 1, [failure(5)])), { type: 'BulkJobFailed', data: { jobId, processedItems: 2, failedItems: 4 } }],
      ]);
      expect(state).toMatchObject({ status: 'Failed', nextIndex: 6, succeeded: 2, failed: 4 });
    });

    it('changes nothing once the job has ended', () => {
      const completed = [
        ...processing,
        ...given(processing)
          .when(record(slice(0, 6)))
          .events(),
      ];
      const failed = [
        ...processing,
        ...given(processing)
          .when(record(slice(0, 6, [failure(5)])))
          .events(),
      ];
      expect(completed.at(-1)?.type).toBe('BulkJobCompleted');
      expect(failed.at(-1)?.type).toBe('BulkJobFailed');
      for (const history of [completed, failed]) {
        given(history)
          .when(record(slice(0, 6)))
          .thenNothingHappened();
        given(history)
          .when(record(slice(6, 1)))
          .thenNothingHappened();
        given(history).when({ type: 'StartBulkJob', data: { jobId } }).thenNothingHappened();
        given(history).when(submit()).thenNothingHappened();
      }
    });

    it('refuses a slice before the job started, and knows no job before its submission', () => {
      given(pending)
        .when(record(slice(0, 2)))
        .thenThrows(ConflictError);
      given()
        .when(record(slice(0, 2)))
        .thenThrows(NotFoundError);
      given(allAttached)
        .when(record(slice(0, 2)))
        .thenThrows(NotFoundError);
    });
  });

  it('folds the whole story into the final state', () => {
    const story = [
      ...processing,
      processed(slice(0, 3, [failure(1)])),
      processed(slice(3, 3)),
      { type: 'BulkJobFailed', data: { jobId, processedItems: 5, failedItems: 1 } } as BulkJobEvent,
    ];
    expect(story.reduce(evolve, initialState())).toEqual({
      status: 'Failed',
      jobType: 'BULK_IMPORT',
      totalItems: 6,
      chunkCount: 3,
      nextIndex: 6,
      succeeded: 5,
      failed: 1,
    });
  });
});
