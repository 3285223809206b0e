import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { productAggregate } from '../../commands/catalog/product.ts';
import { CommandBus } from '../../ledger/command-bus.ts';
import type { CommandReply } from '../../ledger/command-reply.ts';
import { quietKafka, readToEnd, type FetchedRecord } from '../../ledger/kafka.ts';
import { createLogger } from '../../ledger/logger.ts';
import type { Command } from '../../ledger/message.ts';
import { sendCommand } from '../../ledger/send-command.ts';
import { namespaced, topics, type TopicSpec } from '../../ledger/topics.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';
import { eventually } from '../support/orders.ts';

const ctx = useServiceAndTenant();
const stack = inject('stack');

/** Every record of one of the service's topics. */
async function records(topic: TopicSpec): Promise<FetchedRecord[]> {
  const found: FetchedRecord[] = [];
  await readToEnd(quietKafka(stack.kafkaBrokers, 'reply-handover-test'), namespaced(ctx.service.namespace, topic.name), (batch) =>
    found.push(...batch.messages),
  );
  return found;
}

const repliesByCommand = async () =>
  new Map(
    (await records(topics.commandReplies)).map((record) => [record.key!.toString(), JSON.parse(record.value!.toString()) as CommandReply]),
  );

const productCommands = async () =>
  (await records(productAggregate.commands)).map(
    (record) => JSON.parse(record.value!.toString()) as Command<string, { productId: string }>,
  );

/** Replies travel as records only to a bus of another process; the service's own bus is handed its processors' replies. */
describe('command replies', () => {
  it('a write of the service’s own edge is answered without a reply record', async () => {
    const created = await ctx.tenant.request('POST', '/api/v1/pim/products', { title: 'Handed over' });
    expect(created.status).toBe(201);
    const productId = (created.body as { id: string }).id;

    const command = (await productCommands()).find((c) => c.type === 'CreateProduct' && c.data.productId === productId);
    expect(command?.metadata.replyTo).toMatch(/^[\w-]{12}$/);
    const replies = await repliesByCommand();
    expect(replies.has(command!.metadata.commandId)).toBe(false);
    // The topic still carries what other processes' buses read: here only the service's own bus's pings.
    expect([...replies.values()].every((reply) => reply.outcome === 'ping')).toBe(true);
  });

  it('a command of another process’s bus is answered on the replies topic, with its events’ position', async () => {
    const logger = createLogger('silent');
    const kafka = quietKafka(stack.kafkaBrokers, 'reply-handover-test');
    const signals = { running: () => undefined, failed: () => undefined };
    const bus = new CommandBus(kafka, ctx.service.namespace, 15_000, 1_000_000, logger, signals, undefined, 'another-bus');
    await bus.start();
    try {
      const productId = randomUUID();
      const owner = { tenantId: ctx.tenant.tenantId, orgId: ctx.tenant.orgId };
      const commandId = randomUUID();
      const decision = await sendCommand(
        bus,
        owner,
        productAggregate,
        { type: 'CreateProduct', data: { productId, title: 'Answered by record', description: null, category: null } },
        { commandId },
      );
      expect(decision).toMatchObject({ outcome: 'accepted', aggregateId: productId });

      const reply = (await repliesByCommand()).get(commandId);
      expect(reply).toEqual(decision);
      expect(reply).toMatchObject({ positions: [{ topic: namespaced(ctx.service.namespace, productAggregate.events.name) }] });
      const shown = await eventually(
        () => ctx.tenant.request('GET', `/api/v1/pim/products/${productId}`),
        (read) => read.status === 200,
      );
      expect(shown.body).toMatchObject({ id: productId, title: 'Answered by record' });
    } finally {
      await bus.close();
    }
  });
});
