import { createHash, createHmac, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { inboxAggregate, type WebhookReceived } from '../../commands/integrations/inbox.ts';
import { quietKafka, readToEnd } from '../../ledger/kafka.ts';
import type { RecordedEvent } from '../../ledger/message.ts';
import { namespaced } from '../../ledger/topics.ts';
import { send, type ApiResponse, type Tenant } from '../support/client.ts';
import { readEvents } from '../support/event-log.ts';
import { connect, useStandIn } from '../support/integrations.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const GRACE_MS = 4_000;
const BODY_LIMIT = 64 * 1024;

const standIn = useStandIn();

const ctx = useServiceAndTenant(() => ({
  env: {
    UNIFIED_API_URL: standIn.url,
    WEBHOOK_SECRET_KEY: 'webhook-receiver-e2e-key-0123456789abcdef',
    WEBHOOK_SECRET_GRACE_MS: String(GRACE_MS),
    BODY_LIMIT_BYTES: String(BODY_LIMIT),
  },
}));

type Secret = { secret: string; notice_secret: string; version: number; rotated_at: string | null; previous_valid_until: string | null };
const WHSEC = /^whsec_[A-Za-z0-9+/]{43}=$/;

const secretOf = async (who: Tenant): Promise<Secret> => {
  const response = await who.request('GET', '/api/v1/integrations/webhook-secret');
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
};

const sign = (secret: string, raw: string | Buffer) => createHmac('sha256', secret).update(raw).digest('hex');

const deliver = (raw: string | Buffer, signature?: string, headers: Record<string, string> = {}): Promise<ApiResponse> =>
  send(ctx.service.baseUrl, 'POST', '/unified/webhook', {
    rawBody: typeof raw === 'string' ? raw : new Uint8Array(raw),
    headers: { ...(signature === undefined ? {} : { 'x-unified-signature': signature }), ...headers },
  });

const envelope = (connectionId: string, data: Record<string, unknown> = { id: randomUUID() }, event = 'accounting.order.created') =>
  JSON.stringify({ connection_id: connectionId, event, data });

const inbox = async (): Promise<RecordedEvent<WebhookReceived>[]> =>
  (await readEvents(ctx.service.namespace, inboxAggregate.events)) as RecordedEvent<WebhookReceived>[];
const storedAbout = async (externalId: string) => (await inbox()).filter((event) => event.data.externalId === externalId);

const expectError = (response: ApiResponse, status: number, code: string) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body).toEqual({ error: { code, message: expect.any(String), details: expect.any(Array) } });
};

let connection: { id: string; unified: string };
let secret: string;
let other: Tenant;
let otherSecret: string;
beforeAll(async () => {
  connection = await connect(ctx.tenant, standIn);
  secret = (await secretOf(ctx.tenant)).secret;
  other = await ctx.newTenant();
  await connect(other, standIn);
  otherSecret = (await secretOf(other)).secret;
});

describe('the webhook secret', () => {
  it('is 64 hex characters, version 0 before any rotation, stable, and different for every tenant', async () => {
    const first = await secretOf(ctx.tenant);
    expect(first).toEqual({
      secret: expect.stringMatching(/^[0-9a-f]{64}$/),
      notice_secret: expect.stringMatching(WHSEC),
      version: 0,
      rotated_at: null,
      previous_valid_until: null,
    });
    expect(await secretOf(ctx.tenant)).toEqual(first);
    expect(otherSecret).not.toBe(first.secret);
    const sameTenantOtherOrg = await ctx.newTenant({ tenantId: ctx.tenant.tenantId });
    expect((await secretOf(sameTenantOtherOrg)).secret).not.toBe(first.secret);
  });

  it('needs authentication', async () => {
    const response = await send(ctx.service.baseUrl, 'GET', '/api/v1/integrations/webhook-secret');
    expectError(response, 401, 'unauthorized');
  });
});

describe('a signed delivery', () => {
  it('is answered 200 once and stored as exactly one WebhookReceived, whatever the event kind', async () => {
    for (const kind of ['accounting.order.created', 'order.updated', 'product.updated']) {
      const externalId = randomUUID();
      const data = { id: externalId, currency: 'EUR', line_items: [{ sku: 'A-1', quantity: 2, unit_amount: 12.5 }] };
      const raw = envelope(connection.unified, data, kind);
      const response = await deliver(raw, sign(secret, raw));
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toEqual({ status: 'received', duplicate: false });

      const stored = await storedAbout(externalId);
      expect(stored).toHaveLength(1);
      const [event] = stored;
      expect(event?.type).toBe('WebhookReceived');
      expect(event?.data).toMatchObject({
        deliveryId: createHash('sha256').update(raw).digest('hex'),
        connectionId: connection.id,
        unifiedConnectionId: connection.unified,
        event: kind,
        externalId,
      });
      expect(JSON.parse(event?.data.payload ?? 'null')).toEqual(data);
      expect(event?.envelope).toMatchObject({ tenantId: ctx.tenant.tenantId, orgId: ctx.tenant.orgId });
    }
  });

  it('takes a numeric data.id as its text, and a delivery without one', async () => {
    const numeric = Math.floor(Math.random() * 1e9);
    const raw = envelope(connection.unified, { id: numeric });
    expect((await deliver(raw, sign(secret, raw))).status).toBe(200);
    expect(await storedAbout(String(numeric))).toHaveLength(1);

    const marker = randomUUID();
    const anonymous = envelope(connection.unified, { note: marker }, 'product.updated');
    expect((await deliver(anonymous, sign(secret, anonymous))).status).toBe(200);
    const stored = (await inbox()).filter((event) => event.data.payload.includes(marker));
    expect(stored).toHaveLength(1);
    expect(stored[0]?.data.externalId).toBeNull();
  });
});

describe('a signature that does not verify', () => {
  it('is 401 with the error body, and nothing is stored', async () => {
    const externalId = randomUUID();
    const raw = envelope(connection.unified, { id: externalId, total: '10.00' });
    const good = sign(secret, raw);
    const changed = raw.replace('10.00', '10.01');
    expect(changed).not.toBe(raw);
    expect(Buffer.byteLength(changed)).toBe(Buffer.byteLength(raw));
    const cases: [string, () => Promise<ApiResponse>][] = [
      ['missing', () => deliver(raw)],
      ['empty', () => deliver(raw, '')],
      ['not hex', () => deliver(raw, 'z'.repeat(64))],
      ['too short', () => deliver(raw, good.slice(0, 63))],
      ['too long', () => deliver(raw, `${good}00`)],
      ['a wrong secret', () => deliver(raw, sign(randomUUID(), raw))],
      ['a body changed by one byte after signing', () => deliver(changed, good)],
      ["another tenant's secret", () => deliver(raw, sign(otherSecret, raw))],
    ];
    for (const [label, attempt] of cases) {
      const response = await attempt();
      expect(response.status, `${label}: ${JSON.stringify(response.body)}`).toBe(401);
      expectError(response, 401, 'unauthorized');
    }
    expect(await storedAbout(externalId)).toHaveLength(0);
    // The same body, signed right, goes through: what failed above was the signature alone.
    expect((await deliver(raw, good)).status).toBe(200);
    expect(await storedAbout(externalId)).toHaveLength(1);
  });

  it('covers the raw bytes: the same JSON with other whitespace does not verify', async () => {
    const externalId = randomUUID();
    const value = { connection_id: connection.unified, event: 'accounting.order.created', data: { id: externalId } };
    const signature = sign(secret, JSON.stringify(value));
    const response = await deliver(JSON.stringify(value, null, 2), signature);
    expectError(response, 401, 'unauthorized');
    expect(await storedAbout(externalId)).toHaveLength(0);
  });

  it('in upper-case hex is the same signature', async () => {
    const externalId = randomUUID();
    const raw = envelope(connection.unified, { id: externalId });
    expect((await deliver(raw, sign(secret, raw).toUpperCase())).status).toBe(200);
    expect(await storedAbout(externalId)).toHaveLength(1);
  });
});

describe('the connection', () => {
  it('unknown: 401 with exactly the body of a wrong signature, nothing stored', async () => {
    const externalId = randomUUID();
    const unknown = envelope(`conn-${randomUUID()}`, { id: externalId });
    const unknownResponse = await deliver(unknown, sign(secret, unknown));
    const known = envelope(connection.unified, { id: externalId });
    const mismatchResponse = await deliver(known, sign(randomUUID(), known));
    expectError(unknownResponse, 401, 'unauthorized');
    expect(unknownResponse.body).toEqual(mismatchResponse.body);
    expect(unknownResponse.headers.get('content-type')).toBe(mismatchResponse.headers.get('content-type'));
    expect(unknownResponse.headers.get('content-length')).toBe(mismatchResponse.headers.get('content-length'));
    expect(await storedAbout(externalId)).toHaveLength(0);
  });

  it('disconnected: refused with 409 after the signature, nothing stored', async () => {
    const disconnected = await connect(ctx.tenant, standIn);
    const deleted = await ctx.tenant.request('DELETE', `/api/v1/integrations/connections/${disconnected.id}`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.body.status).toBe('DISCONNECTED');

    const externalId = randomUUID();
    const raw = envelope(disconnected.unified, { id: externalId });
    // Without the owner's secret the caller learns nothing about the connection.
    expectError(await deliver(raw, sign(otherSecret, raw)), 401, 'unauthorized');
    const refused = await deliver(raw, sign(secret, raw));
    expectError(refused, 409, 'conflict');
    expect(refused.body.error.details).toEqual([{ path: 'body.connection_id', message: expect.stringContaining('DISCONNECTED') }]);
    expect(await storedAbout(externalId)).toHaveLength(0);
  });

  it('delivered to, then disconnected: the next delivery is refused at once, though the receiver kept the connection', async () => {
    const kept = await connect(ctx.tenant, standIn);
    const before = envelope(kept.unified);
    expect((await deliver(before, sign(secret, before))).status).toBe(200);
    const deleted = await ctx.tenant.request('DELETE', `/api/v1/integrations/connections/${kept.id}`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);

    const externalId = randomUUID();
    const raw = envelope(kept.unified, { id: externalId });
    expectError(await deliver(raw, sign(secret, raw)), 409, 'conflict');
    expect(await storedAbout(externalId)).toHaveLength(0);
  });
});

describe('the request', () => {
  it('not JSON by its content type: 415', async () => {
    const externalId = randomUUID();
    const raw = envelope(connection.unified, { id: externalId });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      expectError(await deliver(raw, sign(secret, raw), { 'content-type': type }), 415, 'unsupported_media_type');
    }
    expect(await storedAbout(externalId)).toHaveLength(0);
  });

  it('over BODY_LIMIT_BYTES: 413; just under it: taken', async () => {
    const externalId = randomUUID();
    const fit = (size: number) => {
      const base = envelope(connection.unified, { id: externalId, pad: '' });
      return envelope(connection.unified, { id: externalId, pad: 'x'.repeat(size - Buffer.byteLength(base)) });
    };
    const over = fit(BODY_LIMIT + 1);
    expect(Buffer.byteLength(over)).toBe(BODY_LIMIT + 1);
    expectError(await deliver(over, sign(secret, over)), 413, 'payload_too_large');
    expect(await storedAbout(externalId)).toHaveLength(0);

    const under = fit(BODY_LIMIT);
    expect((await deliver(under, sign(secret, under))).status).toBe(200);
    expect(await storedAbout(externalId)).toHaveLength(1);
  });

  it('with an invalid envelope: 400 naming the field, nothing stored', async () => {
    const externalId = randomUUID();
    const cases: [string, string][] = [
      ['not JSON', '{"connection_id": '],
      ['a JSON array', '[]'],
      ['no connection_id', JSON.stringify({ event: 'order.created', data: { id: externalId } })],
      ['a blank connection_id', JSON.stringify({ connection_id: ' ', event: 'order.created', data: { id: externalId } })],
      ['a numeric connection_id', JSON.stringify({ connection_id: 7, event: 'order.created', data: { id: externalId } })],
      ['no event', JSON.stringify({ connection_id: connection.unified, data: { id: externalId } })],
      ['a blank event', JSON.stringify({ connection_id: connection.unified, event: '', data: { id: externalId } })],
      ['no data', JSON.stringify({ connection_id: connection.unified, event: 'order.created' })],
      ['data an array', JSON.stringify({ connection_id: connection.unified, event: 'order.created', data: [externalId] })],
      ['data null', JSON.stringify({ connection_id: connection.unified, event: 'order.created', data: null })],
    ];
    for (const [label, raw] of cases) {
      const response = await deliver(raw, sign(secret, raw));
      expect(response.status, `${label}: ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.error.code, label).toMatch(/^(validation_failed|bad_request)$/);
    }
    const invalidUtf8 = Buffer.concat([
      Buffer.from(envelope(connection.unified, { id: externalId }).slice(0, -2)),
      Buffer.from([0xff, 0x7d, 0x7d]),
    ]);
    expect((await deliver(invalidUtf8, sign(secret, invalidUtf8))).status).toBe(400);
    const missing = await deliver(cases[2]![1], sign(secret, cases[2]![1]));
    expect(missing.body.error.details.map((d: { path: string }) => d.path)).toContain('body.connection_id');
    expect(await storedAbout(externalId)).toHaveLength(0);
  });
});

describe('secret rotation', () => {
  it('keeps the old secret working during the grace period, not after', async () => {
    const rotating = await ctx.newTenant();
    const own = await connect(rotating, standIn);
    const old = await secretOf(rotating);
    const delivery = (key: string) => {
      const raw = envelope(own.unified, { id: randomUUID() });
      return deliver(raw, sign(key, raw));
    };
    // The receiver now holds the connection and version 0: the rotation must replace what it holds at once.
    expect((await delivery(old.secret)).status).toBe(200);
    const rotated = await rotating.request('POST', '/api/v1/integrations/webhook-secret/rotate');
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body).toEqual({
      secret: expect.stringMatching(/^[0-9a-f]{64}$/),
      notice_secret: expect.stringMatching(WHSEC),
      version: 1,
      rotated_at: expect.any(String),
      previous_valid_until: expect.any(String),
    });
    expect(rotated.body.secret).not.toBe(old.secret);
    expect(rotated.body.notice_secret).not.toBe(old.notice_secret);
    const validUntil = Date.parse(rotated.body.previous_valid_until);
    expect(validUntil - Date.parse(rotated.body.rotated_at)).toBe(GRACE_MS);
    expect(await secretOf(rotating)).toEqual(rotated.body);

    expect((await delivery(rotated.body.secret)).status).toBe(200);
    const inGrace = await delivery(old.secret);
    expect(Date.now()).toBeLessThan(validUntil);
    expect(inGrace.status, JSON.stringify(inGrace.body)).toBe(200);

    // The end of grace is exact, though the receiver read the versions within WEBHOOK_LOOKUP_TTL_MS (5 s > GRACE_MS).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, validUntil - Date.now()) + 200));
    expectError(await delivery(old.secret), 401, 'unauthorized');
    expect((await delivery(rotated.body.secret)).status).toBe(200);

    // A second rotation ends the grace of the one before at once.
    const again = await rotating.request('POST', '/api/v1/integrations/webhook-secret/rotate');
    expect(again.body.version).toBe(2);
    expect((await delivery(rotated.body.secret)).status).toBe(200);
    expectError(await delivery(old.secret), 401, 'unauthorized');
    // Other tenants' secrets do not move.
    expect((await secretOf(ctx.tenant)).secret).toBe(secret);
  });
});

describe('redeliveries', () => {
  it('the same delivery 3× in turn and 10× at once: 200 each, one inbox event each', async () => {
    const sequential = envelope(connection.unified, { id: randomUUID(), n: 1 });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await deliver(sequential, sign(secret, sequential)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.map((a) => a.body)).toEqual([
      { status: 'received', duplicate: false },
      { status: 'received', duplicate: true },
      { status: 'received', duplicate: true },
    ]);

    const concurrent = envelope(connection.unified, { id: randomUUID(), n: 2 });
    const burst = await Promise.all(Array.from({ length: 10 }, () => deliver(concurrent, sign(secret, concurrent))));
    expect(burst.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(burst.filter((a) => a.body.duplicate === false)).toHaveLength(1);

    const events = await inbox();
    const deliveryId = (raw: string) => createHash('sha256').update(raw).digest('hex');
    expect(events.filter((e) => e.data.deliveryId === deliveryId(sequential))).toHaveLength(1);
    expect(events.filter((e) => e.data.deliveryId === deliveryId(concurrent))).toHaveLength(1);
  });

  it('a redelivery this instance has seen into the inbox is answered without a command', async () => {
    const raw = envelope(connection.unified, { id: randomUUID(), n: 3 });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push((await deliver(raw, sign(secret, raw))).body);
    expect(answers.map((a) => a.duplicate)).toEqual([false, true, true]);
    // Each answer came after its command (if any) was committed: the commands topic holds them all by now.
    const deliveryId = createHash('sha256').update(raw).digest('hex');
    const commands: string[] = [];
    const topic = namespaced(ctx.service.namespace, inboxAggregate.commands.name);
    await readToEnd(quietKafka(inject('stack').kafkaBrokers, 'webhook-test'), topic, (batch) =>
      commands.push(...batch.messages.map((m) => m.value?.toString() ?? '')),
    );
    expect(commands.filter((command) => command.includes(deliveryId))).toHaveLength(1);
  });

  it('deliveries about the same data.id land on one partition, in order', async () => {
    const externalId = randomUUID();
    const kinds = ['accounting.order.created', 'accounting.order.updated', 'accounting.order.updated'];
    for (const [i, kind] of kinds.entries()) {
      const raw = envelope(connection.unified, { id: externalId, revision: i }, kind);
      expect((await deliver(raw, sign(secret, raw))).status).toBe(200);
    }
    const stored = await storedAbout(externalId);
    expect(stored.map((e) => JSON.parse(e.data.payload).revision)).toEqual([0, 1, 2]);
    expect(new Set(stored.map((e) => e.position.partition)).size).toBe(1);
    const offsets = stored.map((e) => BigInt(e.position.offset));
    expect([...offsets].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(offsets);
    expect(new Set(stored.map((e) => e.data.inboxId)).size).toBe(1);
  });
});

describe('the OpenAPI document', () => {
  it('describes the receiver as public with its signature header and envelope, and the secret endpoints', async () => {
    const document = await (await fetch(`${ctx.service.baseUrl}/openapi.json`)).json();
    const receiver = document.paths['/unified/webhook'].post;
    expect(receiver.security).toEqual([]);
    expect(receiver.parameters.map((p: { in: string; name: string }) => `${p.in}:${p.name}`)).toContain('header:x-unified-signature');
    // The spec's envelope, or Unified's native delivery.
    const bodies = receiver.requestBody.content['application/json'].schema.anyOf as { required: string[] }[];
    expect(bodies.map((b) => [...b.required].sort())).toEqual([
      ['connection_id', 'data', 'event'],
      ['data', 'nonce', 'sig256', 'webhook'],
    ]);
    expect(Object.keys(receiver.responses).sort()).toEqual(['200', '400', '401', '409', '413', '415', '429', '503']);
    expect(Object.keys(document.paths['/api/v1/integrations/webhook-secret'])).toEqual(['get']);
    expect(Object.keys(document.paths['/api/v1/integrations/webhook-secret/rotate'])).toEqual(['post']);
  });
});
