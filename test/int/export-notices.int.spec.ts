import { hostname } from 'node:os';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sendEmailNotice } from '../../adapters/notices/email-notice.ts';
import { exportNotice, noticeBody, type ExportNotice } from '../../adapters/notices/export-notice.ts';
import { sendWebhookNotice } from '../../adapters/notices/webhook-notice.ts';
import { standardWebhookVerifies as verifies } from '../support/notice-receivers.ts';

/** A real HTTP receiver: answers each request with the next scripted answer (200 once they run out), keeps what came. */
type Received = { headers: IncomingHttpHeaders; body: string; at: number };
type Answer = { status: number; headers?: Record<string, string> } | 'hang';

let receiver: Server;
let receiverUrl: string;
let script: Answer[] = [];
let received: Received[] = [];

const listening = async (server: { listen: (port: number, host: string, done: () => void) => unknown }, address: () => AddressInfo) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return address().port;
};

/** SMTP: a real server in process, no TLS, no authentication; keeps each raw message with its envelope. */
type Mail = { from: string; to: string[]; raw: string };
let smtp: SMTPServer;
let smtpUrl: string;
const mails: Mail[] = [];

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const answer = script.shift() ?? { status: 200 };
      if (answer === 'hang') return;
      response.writeHead(answer.status, answer.headers).end('ok');
    });
  });
  const port = await listening(receiver, () => receiver.address() as AddressInfo);
  receiverUrl = `http://127.0.0.1:${port}/hooks/exports`;

  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (address.address.endsWith('@refused.test')) return callback(Object.assign(new Error('no such mailbox'), { responseCode: 550 }));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        mails.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  const smtpPort = await listening(smtp, () => smtp.server.address() as AddressInfo);
  smtpUrl = `smtp://127.0.0.1:${smtpPort}`;
});

afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  await new Promise((resolve) => smtp?.close(() => resolve(undefined)));
});

const secret = `whsec_${Buffer.from('a tenant notice secret, 32 bytes').toString('base64')}`;
const anotherSecret = `whsec_${Buffer.from('another tenant secret, 32 bytes!').toString('base64')}`;
const fast = { baseMs: 20, maxMs: 5_000 };
const downloadUrl =
  'https://objects.example.com/exports/t/e-1/products.jsonl.gz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=604800&X-Amz-Signature=0123456789abcdef0123456789abcdef';

const completed = (exportId: string): ExportNotice =>
  exportNotice({
    exportId,
    tenantId: '11111111-1111-4111-8111-111111111111',
    orgId: '22222222-2222-4222-8222-222222222222',
    endedAt: new Date(),
    status: 'COMPLETED',
    productCount: 1234,
    draftCount: 5,
    excludedCount: 17,
    download: { url: downloadUrl, expiresAt: new Date(Date.now() + 7 * 24 * 3600_000) },
    manifestUrl: 'https://objects.example.com/exports/t/e-1/manifest.json?sig=abc',
  });

const sendTo = (notice: ExportNotice, options: Partial<Parameters<typeof sendWebhookNotice>[0]> = {}) =>
  sendWebhookNotice({
    url: receiverUrl,
    secrets: [secret],
    id: notice.id,
    body: noticeBody(notice),
    timeoutMs: 2_000,
    attempts: 4,
    backoff: fast,
    allowPrivateNetworks: true, // the receiver is on loopback
    ...options,
  });

const fresh = (answers: Answer[]) => {
  script = answers;
  received = [];
};

describe('webhook notices', () => {
  it('are POSTed as JSON, signed by Standard Webhooks with the tenant secret, and verified by its library at the receiver', async () => {
    fresh([]);
    const notice = completed('e-signed');
    expect(await sendTo(notice)).toEqual({ delivered: true, attempts: 1, status: 200 });
    const [request] = received;
    if (!request) throw new Error('nothing received');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toBe('e-signed');
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifies(secret, request.headers, request.body)).toBe(true);
    expect(JSON.parse(request.body)).toEqual(notice);

    // The same bytes fail with another secret, another body, id or timestamp, or once the tolerance has passed.
    expect(verifies(anotherSecret, request.headers, request.body)).toBe(false);
    expect(verifies(secret, request.headers, request.body.replace('1234', '1235'))).toBe(false);
    expect(verifies(secret, { ...request.headers, 'webhook-id': 'e-other' }, request.body)).toBe(false);
    const sentAt = Number(request.headers['webhook-timestamp']);
    expect(verifies(secret, { ...request.headers, 'webhook-timestamp': String(sentAt - 1) }, request.body)).toBe(false);
    vi.useFakeTimers({ toFake: ['Date'], now: (sentAt + 301) * 1000 });
    try {
      expect(verifies(secret, request.headers, request.body)).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('carry a signature for each secret while one rotates: a receiver holding either verifies', async () => {
    fresh([]);
    expect(await sendTo(completed('e-rotating'), { secrets: [secret, anotherSecret] })).toMatchObject({ delivered: true });
    const [request] = received;
    if (!request) throw new Error('nothing received');
    expect(request.headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    expect(verifies(secret, request.headers, request.body)).toBe(true);
    expect(verifies(anotherSecret, request.headers, request.body)).toBe(true);
  });

  it('are retried after 503s until a 200, with the same id and each attempt signed', async () => {
    fresh([{ status: 503 }, { status: 503 }, { status: 200 }]);
    const outcome = await sendTo(completed('e-retried'));
    expect(outcome).toEqual({ delivered: true, attempts: 3, status: 200 });
    expect(received.map((r) => r.headers['webhook-id'])).toEqual(['e-retried', 'e-retried', 'e-retried']);
    for (const request of received) expect(verifies(secret, request.headers, request.body)).toBe(true);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
  });

  it("wait as long as a 429's Retry-After asks", async () => {
    fresh([{ status: 429, headers: { 'retry-after': '1' } }, { status: 204 }]);
    expect(await sendTo(completed('e-throttled'))).toEqual({ delivered: true, attempts: 2, status: 204 });
    const [first, second] = received;
    // Retry-After: 1 against a backoff of 20 ms: the second attempt came about a second later (loosely: timers are coarse).
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(900);
  });

  it('are not retried after a 400', async () => {
    fresh([{ status: 400 }]);
    expect(await sendTo(completed('e-refused'))).toEqual({ delivered: false, attempts: 1, status: 400, error: 'HTTP 400' });
    expect(received).toHaveLength(1);
  });

  it('give up on a receiver that does not answer in time, after every attempt', async () => {
    fresh(['hang', 'hang']);
    const outcome = await sendTo(completed('e-slow'), { timeoutMs: 300, attempts: 2 });
    expect(outcome).toMatchObject({ delivered: false, attempts: 2, error: expect.stringContaining('no answer within 300 ms') });
    expect(received).toHaveLength(2);
  });

  it('give up on an unreachable receiver after the attempts, quickly', async () => {
    const closed = createServer();
    const port = await listening(closed, () => closed.address() as AddressInfo);
    await new Promise((resolve) => closed.close(resolve));
    const started = Date.now();
    const outcome = await sendTo(completed('e-unreachable'), { url: `http://127.0.0.1:${port}/x`, attempts: 3 });
    expect(outcome).toMatchObject({ delivered: false, attempts: 3, error: expect.stringMatching(/ECONNREFUSED|fetch failed/) });
    expect(outcome.status).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

/** The message with quoted-printable soft line breaks joined and its =XX escapes decoded (its parts are ASCII here). */
const decoded = (raw: string) =>
  raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

describe('email notices', () => {
  it('reach only public hosts unless private networks are allowed: loopback, private and metadata addresses and names resolving to them are refused without retries', async () => {
    const before = received.length;
    for (const url of [
      receiverUrl,
      receiverUrl.replace('127.0.0.1', 'localhost'),
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
    ]) {
      const outcome = await sendTo(completed('e-private'), { url, allowPrivateNetworks: false });
      expect(outcome, url).toMatchObject({ delivered: false, attempts: 0 });
      expect(outcome.error, url).toMatch(/private address|local name/);
    }
    // A name that is neither localhost nor an address literal but resolves to loopback (this machine's own name) is
    // refused at the connection's own resolution, not retried.
    const ownName = sendTo(completed('e-private'), { url: receiverUrl.replace('127.0.0.1', hostname()), allowPrivateNetworks: false });
    expect(await ownName).toMatchObject({ delivered: false, attempts: 1 });
    expect(received.length).toBe(before);
  });

  it('go out through SMTP with the link and the counts in plain text and HTML', async () => {
    const notice = completed('e-mailed');
    const outcome = await sendEmailNotice({ smtpUrl, from: 'commerce-ledger <no-reply@localhost>', to: 'ops@shop.test', notice });
    expect(outcome).toEqual({ delivered: true, attempts: 1 });
    const mail = mails.find((m) => m.raw.includes('e-mailed'));
    if (!mail) throw new Error('no message received');
    expect(mail.from).toBe('no-reply@localhost');
    expect(mail.to).toEqual(['ops@shop.test']);
    expect(mail.raw).toMatch(/^Subject: Catalog export ready: 1234 products\r?$/m);
    expect(mail.raw).toMatch(/^Message-ID: <e-mailed\.export-notice@commerce-ledger>\r?$/im);
    expect(mail.raw).toMatch(/Content-Type: multipart\/alternative/);
    const text = decoded(mail.raw);
    expect(text).toContain(downloadUrl);
    expect(text).toContain(downloadUrl.replaceAll('&', '&amp;'));
    expect(text).toContain('Products exported: 1234');
    expect(text).toContain('Left out (open ERROR validation issues): 17');
    expect(text).toContain('Of which drafts: 5');
    expect(text).toContain(`Link valid until: ${notice.data.download_expires_at}`);
  });

  it('report a recipient the server refuses, without retrying a permanent refusal', async () => {
    const outcome = await sendEmailNotice({
      smtpUrl,
      from: 'no-reply@localhost',
      to: 'nobody@refused.test',
      notice: completed('e-bounced'),
    });
    expect(outcome).toMatchObject({ delivered: false, attempts: 1, status: 550 });
  });

  it('are skipped when SMTP_URL is not set', async () => {
    expect(await sendEmailNotice({ smtpUrl: undefined, from: 'x@localhost', to: 'ops@shop.test', notice: completed('e-skipped') })).toEqual(
      {
        delivered: false,
        attempts: 0,
        skipped: true,
        error: 'SMTP_URL is not set: email notices are skipped',
      },
    );
  });
});
