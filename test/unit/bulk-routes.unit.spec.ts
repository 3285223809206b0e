import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeLedger, type SentCommand } from '../support/fake-ledger.ts';
import { newCaller, routeApp, type Caller } from '../support/route-app.ts';

const at = new Date('2025-01-02T03:04:05.000Z');
const MAX_ITEMS = 50;

/** The bulk read model's row for a job, as projected. */
const jobRow = (owner: Pick<Caller, 'tenantId' | 'orgId'>, fields: Record<string, unknown> = {}) => ({
  id: randomUUID(),
  tenant_id: owner.tenantId,
  org_id: owner.orgId,
  job_type: 'BULK_IMPORT',
  status: 'PENDING',
  total_items: null,
  processed_items: null,
  failed_items: null,
  created_by: 'dev@example.com',
  created_at: at,
  updated_at: at,
  ...fields,
});

/** Chunks only reach the log; the job shows in the read model once submitted. */
const projectSubmission = (command: SentCommand) =>
  command.type === 'SubmitBulkJob' ? { rows: { jobs: [jobRow(command, { id: command.data.jobId, job_type: command.data.jobType })] } } : {};

let app: FastifyInstance;
let ledger: FakeLedger;
let caller: Caller;

beforeAll(async () => {
  ({ app, ledger } = await routeApp(new FakeLedger(), { BULK_MAX_ITEMS: String(MAX_ITEMS) }));
  caller = await newCaller();
});
afterAll(() => app.close());
beforeEach(() => ledger.reset(projectSubmission, 'jobs', 'item_errors'));

const submit = (body: object, headers = caller.headers) =>
  app.inject({ method: 'POST', url: '/api/v1/pim/bulk-jobs', headers, payload: body });

describe('POST /api/v1/pim/bulk-jobs', () => {
  it('attaches the items, then submits the job, and answers with the PENDING job and its payload', async () => {
    const payload = [{ title: 'Mug' }, { title: 'Cup' }];
    const response = await submit({ job_type: 'BULK_IMPORT', payload });
    expect(response.statusCode).toBe(200);
    expect(ledger.sent.map(({ type }) => type)).toEqual(['AttachBulkItems', 'SubmitBulkJob']);
    const [attach, submitted] = ledger.sent;
    expect(attach?.data).toMatchObject({ chunk: 0, firstIndex: 0, itemCount: 2 });
    expect(submitted).toMatchObject({
      aggregate: 'bulk-job',
      tenantId: caller.tenantId,
      data: { jobType: 'BULK_IMPORT', totalItems: 2, chunkCount: 1, jobId: attach?.data.jobId },
    });
    expect(response.json()).toEqual({
      ...jobRow(caller, { id: submitted?.data.jobId }),
      created_at: at.toISOString(),
      updated_at: at.toISOString(),
      payload_json: JSON.stringify(payload),
    });
  });

  it('refuses an unknown job type, a missing payload and an empty one with the documented 400, sending nothing', async () => {
    const unknownType = await submit({ job_type: 'BULK_MERGE', payload: [] });
    expect(unknownType.statusCode).toBe(400);
    expect(unknownType.json().error).toMatchObject({ code: 'validation_failed', details: [{ path: 'body.job_type' }] });
    const missing = await submit({ job_type: 'BULK_IMPORT' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.details).toEqual([{ path: 'body.payload', message: expect.any(String) }]);
    const empty = await submit({ job_type: 'BULK_DELETE', payload: [] });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toEqual({
      error: {
        code: 'validation_failed',
        message: 'the bulk payload is refused: it holds no item',
        details: [{ path: 'body.payload', message: 'it holds no item' }],
      },
    });
    expect(ledger.sent).toEqual([]);
  });

  it('answers 413 for more items than BULK_MAX_ITEMS', async () => {
    const response = await submit({ job_type: 'BULK_DELETE', payload: Array.from({ length: MAX_ITEMS + 1 }, () => randomUUID()) });
    expect(response.statusCode).toBe(413);
    expect(response.json().error).toMatchObject({ code: 'payload_too_large' });
    expect(ledger.sent).toEqual([]);
  });

  it('answers 401 without a token and 403 with another tenant’s', async () => {
    const { authorization: _, ...withoutToken } = caller.headers;
    expect((await submit({ job_type: 'BULK_IMPORT', payload: [{ title: 'Mug' }] }, withoutToken)).statusCode).toBe(401);
    const other = await newCaller();
    const foreign = await submit(
      { job_type: 'BULK_IMPORT', payload: [{ title: 'Mug' }] },
      { ...caller.headers, authorization: other.headers.authorization! },
    );
    expect(foreign.statusCode).toBe(403);
    expect(ledger.sent).toEqual([]);
  });

  it('answers 503 with Retry-After while Kafka is down, sending nothing', async () => {
    ledger.down.add('kafka');
    const response = await submit({ job_type: 'BULK_IMPORT', payload: [{ title: 'Mug' }] });
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('2');
    expect(ledger.sent).toEqual([]);
  });
});

describe('GET /api/v1/pim/bulk-jobs', () => {
  it('reads the caller’s job with its item errors; another tenant’s job is a 404', async () => {
    const mine = jobRow(caller, { status: 'FAILED', total_items: 2, processed_items: 2, failed_items: 1 });
    const theirs = jobRow({ tenantId: randomUUID(), orgId: caller.orgId });
    ledger.tables.jobs = [mine, theirs];
    ledger.tables.item_errors = [{ job_id: mine.id, item_index: 1, code: 'MISSING_TITLE', message: 'title is required', product_id: null }];
    const read = (id: string) => app.inject({ method: 'GET', url: `/api/v1/pim/bulk-jobs/${id}`, headers: caller.headers });
    const found = await read(mine.id);
    expect(found.statusCode).toBe(200);
    expect(found.json()).toMatchObject({
      id: mine.id,
      status: 'FAILED',
      errors: [{ item_index: 1, code: 'MISSING_TITLE', message: 'title is required', product_id: null }],
    });
    const foreign = await read(theirs.id);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: { code: 'not_found', message: `bulk job ${theirs.id} not found`, details: [] } });
  });

  it('lists the caller’s jobs of one type, BULK_UPDATE by default', async () => {
    const update = jobRow(caller, { job_type: 'BULK_UPDATE' });
    ledger.tables.jobs = [jobRow(caller), update, jobRow({ tenantId: randomUUID(), orgId: caller.orgId }, { job_type: 'BULK_UPDATE' })];
    const list = await app.inject({ method: 'GET', url: '/api/v1/pim/bulk-jobs', headers: caller.headers });
    expect(list.json().map((job: { id: string }) => job.id)).toEqual([update.id]);
  });

  it('answers 503 at once while Postgres is down', async () => {
    ledger.down.add('postgres');
    const response = await app.inject({ method: 'GET', url: '/api/v1/pim/bulk-jobs', headers: caller.headers });
    expect(response.statusCode).toBe(503);
    expect(response.json().error.code).toBe('unavailable');
  });
});
