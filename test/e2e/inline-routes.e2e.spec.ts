import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { inventoryAggregate } from '../../commands/oms/inventory.ts';
import { orderAggregate } from '../../commands/oms/order.ts';
import { EventCodec } from '../../ledger/event-codec.ts';
import { ROUTED_BY_HEADER } from '../../ledger/event-router.ts';
import { keyedProducer, quietKafka, readToEnd, type FetchedRecord } from '../../ledger/kafka.ts';
import { namespaced, type TopicSpec } from '../../ledger/topics.ts';
import { eventually, orderRequest, stocked } from '../support/orders.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

const ctx = useServiceAndTenant();
const stack = inject('stack');

/** Every record of a topic of the service's, with its partition. */
async function records(topic: TopicSpec): Promise<(FetchedRecord & { partition: number })[]> {
  const found: (FetchedRecord & { partition: number })[] = [];
  await readToEnd(quietKafka(stack.kafkaBrokers, 'inline-routes-test'), namespaced(ctx.service.namespace, topic.name), (batch) =>
    found.push(...batch.messages.map((message) => ({ ...message, partition: batch.partition }))),
  );
  return found;
}

/** The commands of a command topic of the given type about `orderId`. */
const commandsAbout = async (topic: TopicSpec, type: string, orderId: string) =>
  (await records(topic))
    .map((record) => JSON.parse(record.value!.toString()) as { type: string; data: { orderId: string } })
    .filter((command) => command.type === type && command.data.orderId === orderId);

/** The events of an events topic of the given type about `orderId`, with their records. */
async function eventsAbout(topic: TopicSpec, type: string, orderId: string) {
  const codec = EventCodec.connect(stack.schemaRegistryUrl, ctx.service.namespace);
  const name = namespaced(ctx.service.namespace, topic.name);
  const found = [];
  for (const record of await records(topic)) {
    const event = await codec.decode(record.value!, { topic: name, partition: record.partition, offset: record.offset });
    if (event.type === type && (event.data as { orderId?: string }).orderId === orderId) found.push({ record, event });
  }
  return found;
}

/**
 * A copy of an event about another order, written after it on its partition without the header, as every event was
 * before routes ran inline: its router routes it, and once it has, it has read past the original too.
 */
async function routeUnmarkedCopy(topic: TopicSpec, { record, event }: Awaited<ReturnType<typeof eventsAbout>>[number]) {
  const codec = EventCodec.connect(stack.schemaRegistryUrl, ctx.service.namespace);
  await codec.registerAll([topic]);
  const name = namespaced(ctx.service.namespace, topic.name);
  const orderId = randomUUID();
  const copy = { type: event.type, data: { ...(event.data as object), orderId } };
  const producer = keyedProducer(quietKafka(stack.kafkaBrokers, 'inline-routes-test'));
  try {
    const value = await codec.encode(name, copy, { ...event.envelope, eventId: randomUUID() });
    await producer.send({ topic: name, messages: [{ key: record.key!.toString(), partition: record.partition, value }] });
  } finally {
    await producer.disconnect();
  }
  return orderId;
}

describe('event routes run in the transaction of the events they read', () => {
  it("an order's reservation and confirmation are routed once, by the processors deciding them; an unmarked event by its router", async () => {
    const stock = await stocked(ctx.tenant, 5);
    const line = { name: 'Routed cup', quantity: 1, unit_price: '3.00', variant_id: stock.variantId, location_id: stock.locationId };
    const created = await ctx.tenant.request('POST', '/api/v1/oms/orders', orderRequest({ line_items: [line] }));
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('confirmed');
    const orderId = created.body.id as string;

    const steps = [
      { events: orderAggregate.events, event: 'OrderPlaced', commands: inventoryAggregate.commands, command: 'ReserveStock' },
      { events: inventoryAggregate.events, event: 'StockReserved', commands: orderAggregate.commands, command: 'ConfirmOrder' },
    ];
    for (const step of steps) {
      const found = await eventsAbout(step.events, step.event, orderId);
      expect(found, step.event).toHaveLength(1);
      const [ours] = found as [(typeof found)[number]];
      // The event names the route that already ran on it, in the transaction that wrote it.
      expect(ours.record.headers[ROUTED_BY_HEADER]?.toString().split(','), step.event).toContain('order-fulfilment');
      const other = await routeUnmarkedCopy(step.events, ours);
      await eventually(
        () => commandsAbout(step.commands, step.command, other),
        (commands) => commands.length === 1,
      );
      // The router has read past ours and passed over it: the one command is the processor's.
      expect(await commandsAbout(step.commands, step.command, orderId), step.command).toHaveLength(1);
    }
  });
});
