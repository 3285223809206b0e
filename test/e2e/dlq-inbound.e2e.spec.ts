import { execFile } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { inboundDeadLetterAggregate } from '../../commands/integrations/inbound-dead-letter.ts';
import { send, type Tenant } from '../support/client.ts';
import { readEvents } from '../support/event-log.ts';
import { connect, eventually, useStandIn } from '../support/integrations.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const standIn = useStandIn();

const ctx = useServiceAndTenant(() => ({
  env: { UNIFIED_API_URL: standIn.url, WEBHOOK_SECRET_KEY: 'dlq-inbound-e2e-key-0123456789abcdef' },
}));

/** `npm run dlq -- <args>` against the test service's database and broker. */
const dlq = (...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('npm', ['run', '-s', 'dlq', '--', ...args], { cwd: root, env: ctx.service.env }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });

type Connection = { id: string; unified: string };

async function deliver(who: Tenant, connection: Connection, data: Record<string, unknown>): Promise<void> {
  const secret = await who.request('GET', '/api/v1/integrations/webhook-secret');
  expect(secret.status, JSON.stringify(secret.body)).toBe(200);
  const raw = JSON.stringify({ connection_id: connection.unified, event: 'accounting.order.created', data });
  const signature = createHmac('sha256', secret.body.secret as string)
    .update(raw)
    .digest('hex');
  const response = await send(ctx.service.baseUrl, 'POST', '/unified/webhook', {
    rawBody: raw,
    headers: { 'x-unified-signature': signature },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

const deadLettersOf = async (who: Tenant, connection: Connection) => {
  const response = await who.request('GET', `/api/v1/integrations/connections/${connection.id}/inbound`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.dead_letters as Record<string, any>[];
};

describe('npm run dlq and inbound dead letters', () => {
  it('lists an unmappable inbound event beside the pushes (kind inbound) and re-drives it into the order mapping', async () => {
    const tenant = ctx.tenant;
    const connection = await connect(tenant, standIn);
    const externalId = `ext-${randomUUID()}`;
    await deliver(tenant, connection, { id: externalId, currency: 'XYZ', line_items: [{ name: 'Thing', quantity: 1, unit_amount: 1 }] });
    const [letter] = await eventually(
      () => deadLettersOf(tenant, connection),
      (list) => list.length === 1,
    );
    expect(letter).toMatchObject({ external_id: externalId, status: 'DEAD_LETTERED', times_dead_lettered: 1 });
    const id = letter!.id as string;

    const listed = await dlq('list', '--json', '--tenant', tenant.tenantId);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({
        kind: 'inbound',
        id,
        inbound_dead_letter_id: id,
        tenant_id: tenant.tenantId,
        org_id: tenant.orgId,
        connection_id: connection.id,
        event: 'accounting.order.created',
        external_id: externalId,
        attempts: 1,
        reason: letter!.reason,
      }),
    ]);
    const inboundOnly = await dlq('list', '--json', '--kind', 'inbound', '--connection', connection.id);
    expect(JSON.parse(inboundOnly.stdout).map((r: { id: string }) => r.id)).toEqual([id]);
    const pushesOnly = await dlq('list', '--json', '--kind', 'push', '--tenant', tenant.tenantId);
    expect(JSON.parse(pushesOnly.stdout)).toEqual([]);
    const table = await dlq('list', '--connection', connection.id);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`inbound\\s+${id}`));
    expect(table.stdout).toContain(externalId);

    const retried = await dlq('retry', id);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toContain(id);

    // The currency is still wrong: the mapping takes the delivery again and files it again, the re-drive recorded.
    const again = await eventually(
      () => deadLettersOf(tenant, connection),
      (list) => list[0]?.times_dead_lettered === 2,
    );
    expect(again).toEqual([
      expect.objectContaining({ id, status: 'DEAD_LETTERED', times_dead_lettered: 2, redriven_at: expect.any(String) }),
    ]);
    const events = (await readEvents(ctx.service.namespace, inboundDeadLetterAggregate.events)).filter(
      (e) => e.envelope.aggregateId === id,
    );
    expect(events.map((e) => e.type)).toEqual(['InboundEventDeadLettered', 'InboundEventRedriven', 'InboundEventDeadLettered']);
    expect(events[1]!.envelope).toMatchObject({ tenantId: tenant.tenantId, orgId: tenant.orgId, actor: { email: 'dlq-cli' } });
    expect(events[1]!.data).toMatchObject({ inboundDeadLetterId: id, externalId, connectionId: connection.id });

    const relisted = await dlq('list', '--json', '--kind', 'inbound', '--tenant', tenant.tenantId);
    expect(JSON.parse(relisted.stdout)).toEqual([expect.objectContaining({ id, attempts: 2 })]);

    // Another tenant's filter, or the other kind, finds nothing to re-drive: a named id is then a failure, nothing sent.
    const other = await dlq('retry', id, '--kind', 'push');
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/not dead-lettered/);
    const none = await dlq('retry', '--all', '--kind', 'push', '--tenant', tenant.tenantId);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toMatch(/no dead-lettered pushes to re-drive/);
    const bad = await dlq('list', '--kind', 'orders');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/usage: npm run dlq/);
  });
});
