import { defineAggregate } from '../../ledger/aggregate.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';
import { uuidv5 } from '../../ledger/uuid-v5.ts';

/**
 * A tenant's catalog exports (spec: POST /pim/export; issue 14), one aggregate per tenant and org so that one writer
 * decides how requests queue: at most one export runs and at most one waits. A request while one waits joins it (its
 * snapshot is taken after both requests). The export worker starts the waiting one, writes the snapshot to object
 * storage and records the outcome; the notifier then records each completion notice it sent (docs/decisions.md,
 * "Catalog export").
 */
const CATALOG_EXPORTS_NAMESPACE = 'a1d7c1c4-5b0e-4f57-9d8e-3c6f0f1b2e11';
export const catalogExportsIdOf = (tenantId: string, orgId: string): string => uuidv5(`${tenantId}/${orgId}`, CATALOG_EXPORTS_NAMESPACE);

export type NoticeChannel = 'webhook' | 'email';
export const noticeChannels: NoticeChannel[] = ['webhook', 'email'];
/** Where completion notices go, as configured when the export ended. */
export type NoticeTargets = { webhookUrl: string | null; email: string | null };

/** What the snapshot held and where it is (keys in object storage; counts; the log position it reflects). */
export type ExportResult = {
  exportId: string;
  manifestKey: string;
  productsKey: string;
  taxonomyKey: string;
  productCount: number;
  draftCount: number;
  excludedCount: number;
  bytes: number;
  /** JSON text of the read models' checkpoints the snapshot reflects, by projection, topic and partition. */
  position: string;
};

// ── Events ──────────────────────────────────────────────────────────────────
export type ExportNotificationConfigured = Event<'ExportNotificationConfigured', { catalogExportsId: string } & NoticeTargets>;
export type ExportRequested = Event<'ExportRequested', { catalogExportsId: string; exportId: string }>;
/** A request that found an export waiting to start: it is served by that one. */
export type ExportRequestJoined = Event<'ExportRequestJoined', { catalogExportsId: string; exportId: string; requestId: string }>;
export type ExportStarted = Event<'ExportStarted', { catalogExportsId: string; exportId: string }>;
export type ExportCompleted = Event<'ExportCompleted', { catalogExportsId: string } & ExportResult & NoticeTargets>;
export type ExportFailed = Event<'ExportFailed', { catalogExportsId: string; exportId: string; reason: string } & NoticeTargets>;
export type ExportNoticeRecorded = Event<
  'ExportNoticeRecorded',
  { catalogExportsId: string; exportId: string; channel: NoticeChannel; delivered: boolean; attempts: number; detail: string | null }
>;

export type CatalogExportEvent =
  | ExportNotificationConfigured
  | ExportRequested
  | ExportRequestJoined
  | ExportStarted
  | ExportCompleted
  | ExportFailed
  | ExportNoticeRecorded;

// ── State ───────────────────────────────────────────────────────────────────
export type CatalogExports = {
  notify: NoticeTargets;
  running: string | null;
  waiting: string | null;
  /** Ended exports whose notices are not all recorded yet, with the channels still owed (bounded by the exports in flight). */
  owed: Record<string, NoticeChannel[]>;
};

export const initialState = (): CatalogExports => ({
  notify: { webhookUrl: null, email: null },
  running: null,
  waiting: null,
  owed: {},
});

const channelsOf = ({ webhookUrl, email }: NoticeTargets): NoticeChannel[] => [
  ...(webhookUrl !== null ? (['webhook'] as const) : []),
  ...(email !== null ? (['email'] as const) : []),
];

const end = (state: CatalogExports, exportId: string, targets: NoticeTargets): CatalogExports => {
  const channels = channelsOf(targets);
  const owed = channels.length > 0 ? { ...state.owed, [exportId]: channels } : state.owed;
  return { ...state, running: state.running === exportId ? null : state.running, owed };
};

export const evolve = (state: CatalogExports, event: CatalogExportEvent): CatalogExports => {
  switch (event.type) {
    case 'ExportNotificationConfigured':
      return { ...state, notify: { webhookUrl: event.data.webhookUrl, email: event.data.email } };
    case 'ExportRequested':
      return { ...state, waiting: event.data.exportId };
    case 'ExportRequestJoined':
      return state;
    case 'ExportStarted':
      return { ...state, running: event.data.exportId, waiting: state.waiting === event.data.exportId ? null : state.waiting };
    case 'ExportCompleted':
    case 'ExportFailed':
      return end(state, event.data.exportId, event.data);
    case 'ExportNoticeRecorded': {
      const left = (state.owed[event.data.exportId] ?? []).filter((c) => c !== event.data.channel);
      const { [event.data.exportId]: _done, ...rest } = state.owed;
      return { ...state, owed: left.length > 0 ? { ...rest, [event.data.exportId]: left } : rest };
    }
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
export type ConfigureExportNotification = Command<'ConfigureExportNotification', ExportNotificationConfigured['data']>;
export type RequestExport = Command<'RequestExport', { catalogExportsId: string; exportId: string }>;
export type StartExport = Command<'StartExport', { catalogExportsId: string; exportId: string }>;
export type CompleteExport = Command<'CompleteExport', { catalogExportsId: string } & ExportResult>;
export type FailExport = Command<'FailExport', { catalogExportsId: string; exportId: string; reason: string }>;
export type RecordExportNotice = Command<'RecordExportNotice', ExportNoticeRecorded['data']>;

export type CatalogExportCommand =
  ConfigureExportNotification | RequestExport | StartExport | CompleteExport | FailExport | RecordExportNotice;

// ── Decide ──────────────────────────────────────────────────────────────────
const notFound = (exportId: string) => new NotFoundError(`export ${exportId} not found`);

const configure = ({ data }: ConfigureExportNotification, state: CatalogExports): CatalogExportEvent[] => {
  if (data.webhookUrl === state.notify.webhookUrl && data.email === state.notify.email) return [];
  return [{ type: 'ExportNotificationConfigured', data }];
};

/** Runs next, or joins the export already waiting; a request for an export already known (a retry) changes nothing. */
const request = ({ data }: RequestExport, state: CatalogExports): CatalogExportEvent[] => {
  if (data.exportId === state.waiting || data.exportId === state.running) return [];
  if (state.waiting !== null) {
    const joined = { catalogExportsId: data.catalogExportsId, exportId: state.waiting, requestId: data.exportId };
    return [{ type: 'ExportRequestJoined', data: joined }];
  }
  return [{ type: 'ExportRequested', data }];
};

/** The waiting export starts once the one running has ended; starting the running one again changes nothing. */
const start = ({ data }: StartExport, state: CatalogExports): CatalogExportEvent[] => {
  if (data.exportId === state.running) return [];
  if (data.exportId !== state.waiting) throw notFound(data.exportId);
  if (state.running !== null) throw new ConflictError(`export ${state.running} is still running`);
  return [{ type: 'ExportStarted', data }];
};

const complete = ({ data }: CompleteExport, state: CatalogExports): CatalogExportEvent[] => {
  if (data.exportId !== state.running) {
    if (data.exportId === state.waiting) throw new ConflictError(`export ${data.exportId} has not started`);
    return []; // ended already: the worker's retry of a completion
  }
  if ([data.productCount, data.draftCount, data.excludedCount, data.bytes].some((n) => !Number.isInteger(n) || n < 0)) {
    throw new ValidationError('export counts are non-negative integers', [{ path: 'data', message: 'counts' }]);
  }
  return [{ type: 'ExportCompleted', data: { ...data, ...state.notify } }];
};

const fail = ({ data }: FailExport, state: CatalogExports): CatalogExportEvent[] => {
  if (data.exportId !== state.running) {
    if (data.exportId === state.waiting) throw new ConflictError(`export ${data.exportId} has not started`);
    return [];
  }
  return [{ type: 'ExportFailed', data: { ...data, ...state.notify } }];
};

/** Each owed notice is recorded once; one not owed (recorded already, or never configured) changes nothing. */
const recordNotice = ({ data }: RecordExportNotice, state: CatalogExports): CatalogExportEvent[] => {
  if (!(state.owed[data.exportId] ?? []).includes(data.channel)) return [];
  return [{ type: 'ExportNoticeRecorded', data }];
};

export const decide = (command: CatalogExportCommand, state: CatalogExports): CatalogExportEvent[] => {
  switch (command.type) {
    case 'ConfigureExportNotification':
      return configure(command, state);
    case 'RequestExport':
      return request(command, state);
    case 'StartExport':
      return start(command, state);
    case 'CompleteExport':
      return complete(command, state);
    case 'FailExport':
      return fail(command, state);
    case 'RecordExportNotice':
      return recordNotice(command, state);
    default: {
      const exhaustive: never = command;
      throw new Error(`unknown command ${JSON.stringify(exhaustive)}`);
    }
  }
};

export const catalogExportDecider: Decider<CatalogExportCommand, CatalogExportEvent, CatalogExports> = { initialState, evolve, decide };

export const catalogExportAggregate = defineAggregate({
  name: 'catalog-export',
  stream: 'pim.catalog-export',
  decider: catalogExportDecider,
  id: 'catalogExportsId',
  events: {
    namespace: 'commerce.ledger.export',
    types: [
      'ExportNotificationConfigured',
      'ExportRequested',
      'ExportRequestJoined',
      'ExportStarted',
      'ExportCompleted',
      'ExportFailed',
      'ExportNoticeRecorded',
    ],
  },
});
