import { describe, expect, it } from 'vitest';
import {
  catalogExportDecider,
  type CatalogExportCommand,
  type CatalogExportEvent,
  type ExportResult,
  type NoticeTargets,
} from '../../commands/export/catalog-export.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(catalogExportDecider);

const catalogExportsId = '44444444-4444-4444-8444-444444444444';
const [a, b, c] = ['aaaaaaaa-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002', 'cccccccc-0000-4000-8000-000000000003'];
const ids = (exportId: string) => ({ catalogExportsId, exportId });
const none: NoticeTargets = { webhookUrl: null, email: null };
const targets: NoticeTargets = { webhookUrl: 'https://hooks.example.com/exports', email: 'ops@example.com' };

type Cmd = WithoutMetadata<CatalogExportCommand>;
const request = (exportId: string): Cmd => ({ type: 'RequestExport', data: ids(exportId) });
const requested = (exportId: string): CatalogExportEvent => ({ type: 'ExportRequested', data: ids(exportId) });
const startCmd = (exportId: string): Cmd => ({ type: 'StartExport', data: ids(exportId) });
const started = (exportId: string): CatalogExportEvent => ({ type: 'ExportStarted', data: ids(exportId) });
const result = (exportId: string): ExportResult => ({
  exportId,
  manifestKey: `exports/t/o/${exportId}/manifest.json`,
  productsKey: `exports/t/o/${exportId}/products.jsonl.gz`,
  taxonomyKey: `exports/t/o/${exportId}/taxonomy.jsonl.gz`,
  productCount: 10,
  draftCount: 2,
  excludedCount: 1,
  bytes: 4_096,
  position: '{"catalog":{}}',
});
const completeCmd = (exportId: string, over: Partial<ExportResult> = {}): Cmd => ({
  type: 'CompleteExport',
  data: { catalogExportsId, ...result(exportId), ...over },
});
const completed = (exportId: string, notify = none): CatalogExportEvent => ({
  type: 'ExportCompleted',
  data: { catalogExportsId, ...result(exportId), ...notify },
});
const configure = (notify: NoticeTargets): Cmd => ({
  type: 'ConfigureExportNotification',
  data: { catalogExportsId, ...notify },
});
const configured = (notify: NoticeTargets): CatalogExportEvent => ({
  type: 'ExportNotificationConfigured',
  data: { catalogExportsId, ...notify },
});
const notice = (exportId: string, channel: 'webhook' | 'email', delivered = true) => ({
  catalogExportsId,
  exportId,
  channel,
  delivered,
  attempts: 1,
  detail: null,
});

describe('catalog export decider', () => {
  it('queues a request when none waits, whether or not one runs', () => {
    given()
      .when(request(a))
      .then([requested(a)]);
    given([requested(a), started(a)])
      .when(request(b))
      .then([requested(b)]);
  });

  it('joins a request to the export already waiting, so at most one waits', () => {
    given([requested(a), started(a), requested(b)])
      .when(request(c))
      .then([{ type: 'ExportRequestJoined', data: { catalogExportsId, exportId: b, requestId: c } }]);
    given([requested(a)])
      .when(request(b))
      .then([{ type: 'ExportRequestJoined', data: { catalogExportsId, exportId: a, requestId: b } }]);
  });

  it('changes nothing for a retried request of an export it knows waiting or running', () => {
    given([requested(a)])
      .when(request(a))
      .thenNothingHappened();
    given([requested(a), started(a)])
      .when(request(a))
      .thenNothingHappened();
  });

  it('starts the waiting export only once the running one ended', () => {
    given([requested(a)])
      .when(startCmd(a))
      .then([started(a)]);
    given([requested(a), started(a), requested(b)])
      .when(startCmd(b))
      .thenThrows(ConflictError);
    given([requested(a), started(a), requested(b), completed(a)])
      .when(startCmd(b))
      .then([started(b)]);
    given([requested(a), started(a)])
      .when(startCmd(a))
      .thenNothingHappened();
    given().when(startCmd(a)).thenThrows(NotFoundError);
  });

  it('completes the running export once, with the notice targets configured at that moment', () => {
    given([configured(targets), requested(a), started(a)])
      .when(completeCmd(a))
      .then([completed(a, targets)]);
    given([requested(a), started(a), completed(a)])
      .when(completeCmd(a))
      .thenNothingHappened();
    given([requested(a)])
      .when(completeCmd(a))
      .thenThrows(ConflictError);
    given([requested(a), started(a)])
      .when(completeCmd(a, { productCount: -1 }))
      .thenThrows(ValidationError);
  });

  it('records a failure of the running export once', () => {
    const fail: Cmd = { type: 'FailExport', data: { ...ids(a), reason: 'object storage unreachable' } };
    given([requested(a), started(a)])
      .when(fail)
      .then([{ type: 'ExportFailed', data: { ...ids(a), reason: 'object storage unreachable', ...none } }]);
    given([requested(a), started(a), completed(a)])
      .when(fail)
      .thenNothingHappened();
  });

  it('records each owed notice once, and none that is not owed', () => {
    const ended = [configured(targets), requested(a), started(a), completed(a, targets)];
    const record = (channel: 'webhook' | 'email'): Cmd => ({ type: 'RecordExportNotice', data: notice(a, channel) });
    given(ended)
      .when(record('webhook'))
      .then([{ type: 'ExportNoticeRecorded', data: notice(a, 'webhook') }]);
    given([...ended, { type: 'ExportNoticeRecorded', data: notice(a, 'webhook') }])
      .when(record('webhook'))
      .thenNothingHappened();
    given([...ended, { type: 'ExportNoticeRecorded', data: notice(a, 'webhook') }])
      .when(record('email'))
      .then([{ type: 'ExportNoticeRecorded', data: notice(a, 'email') }]);
    // Completed while nothing was configured: no notice is owed.
    given([requested(a), started(a), completed(a)])
      .when(record('webhook'))
      .thenNothingHappened();
  });

  it('keeps no state for exports whose notices are all recorded', () => {
    const { state } = given([configured({ webhookUrl: targets.webhookUrl, email: null }), requested(a), started(a)]).whenInTurn([
      completeCmd(a),
      { type: 'RecordExportNotice', data: notice(a, 'webhook') },
    ]);
    expect(state.owed).toEqual({});
    expect(state.running).toBeNull();
  });

  it('records a change of notice targets, and nothing when they are the same', () => {
    given()
      .when(configure(targets))
      .then([configured(targets)]);
    given([configured(targets)])
      .when(configure(targets))
      .thenNothingHappened();
    given().when(configure(none)).thenNothingHappened();
  });
});
