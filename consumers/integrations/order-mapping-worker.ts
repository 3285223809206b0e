import {
  inboundDeadLetterAggregate,
  inboundDeadLetterIdOf,
  type InboundDelivery,
  type InboundEventRedriven,
} from '../../commands/integrations/inbound-dead-letter.ts';
import { inboxAggregate, type WebhookReceived } from '../../commands/integrations/inbox.ts';
import { orderAggregate } from '../../commands/oms/order.ts';
import type { Aggregate } from '../../ledger/aggregate.ts';
import type { CommandReply } from '../../ledger/command-reply.ts';
import type { Command, CommandInput, Event, EventEnvelope, RecordedEvent } from '../../ledger/message.ts';
import type { Worker, WorkerDeps } from '../../ledger/runtime.ts';
import { sendCommand, type Decision } from '../../ledger/send-command.ts';
import { sleep } from '../../ledger/sleep.ts';
import { errorField } from '../../ledger/throttled-log.ts';
import { defineWorker, type TopicMessage, type WorkerContext, type WorkerHooks } from '../../ledger/worker.ts';
import {
  mappedOrderId,
  MAPPED_AT_ONCE,
  mappingKindOf,
  parsePlatformOrder,
  placeOrderFrom,
  requestedStatusOf,
} from '../../commands/oms/order-mapping.ts';
import { mappingConnection, matchLines, orderStatusOf, type MappingConnection } from './order-mapping-lookups.ts';

/** How long an update waits for its order to leave `pending` (the reservation) before the event is tried again. */
const DECIDED_WAIT_MS = 15_000;
/** A connection missing from the read model this long after the event is not lag: the event is dead-lettered. */
const UNKNOWN_CONNECTION_AFTER_MS = 5 * 60_000;

/** An event that can never be mapped: it goes to the inbound dead-letter topic with this reason. */
class Unmappable extends Error {}
/** Anything else (a dependency away, a command timeout, a read model behind): the same event is tried again. */
class NotYet extends Error {}

type Owner = Pick<EventEnvelope, 'tenantId' | 'orgId' | 'correlationId'>;

/** One inbox (or re-driven) event to map, with where it is in its partition. */
type Mappable = { key: string; envelope: EventEnvelope; delivery: InboundDelivery; kind: 'created' | 'updated' };
type Connections = Map<string, Promise<MappingConnection | undefined>>;

/**
 * The order mapping (issue 12): consumes the webhook inbox (and re-driven dead letters) in its own consumer group and
 * turns each platform order event into commands to the order aggregate, whose id derives from the connection and the
 * external order id, so a redelivered, duplicated or re-driven event lands on the same order and changes nothing.
 * Up to MAPPED_AT_ONCE consecutive events of a partition are mapped side by side, in waves: the first event of each
 * external order (inbox id) in the first, its next in the second, and so on, so one external order's events stay in
 * order. Their offsets are committed only once their commands' outcomes are known: a failure retries the slice in
 * place with backoff, skipping the events already mapped and holding back the failed one's successors; an event that
 * can never be mapped is dead-lettered and the partition moves on.
 */
class OrderMappingWorker implements WorkerHooks {
  private readonly deps: WorkerDeps;
  /** Events mapped in a slice that has not finished yet (a retry of the slice skips them). */
  private readonly mapped = new Set<string>();

  private readonly context: WorkerContext;

  constructor(context: WorkerContext) {
    this.context = context;

    this.deps = context.deps;
  }

  readonly onError = (error: unknown, { attempt, message }: { attempt: number; message?: TopicMessage }): void =>
    this.context.throttled.write(
      'warn',
      `order-mapping:${error instanceof NotYet ? 'not-yet' : 'failed'}`,
      { err: errorField(error), topic: message?.topic, partition: message?.partition, offset: message?.offset, attempt },
      'order mapping could not finish an event; trying it again',
    );

  readonly handleSlice = async (messages: TopicMessage[]): Promise<void> => {
    const waves: Mappable[][] = [];
    const depth = new Map<string, number>();
    for (const message of messages) {
      const mappable = await this.mappableOf(message);
      if (!mappable || this.mapped.has(mappable.key)) continue;
      const wave = depth.get(mappable.delivery.inboxId) ?? 0;
      depth.set(mappable.delivery.inboxId, wave + 1);
      (waves[wave] ??= []).push(mappable);
    }
    const failed = new Map<string, unknown>();
    const connections: Connections = new Map();
    for (const wave of waves) {
      await Promise.all(
        wave
          .filter(({ delivery }) => !failed.has(delivery.inboxId))
          .map(async (mappable) => {
            try {
              await this.mapOrDeadLetter(mappable, connections);
              this.mapped.add(mappable.key);
            } catch (error) {
              failed.set(mappable.delivery.inboxId, error);
            }
          }),
      );
    }
    if (failed.size > 0) throw failed.values().next().value;
    for (const message of messages) this.mapped.delete(keyOf(message));
  };

  private async mappableOf(message: TopicMessage): Promise<Mappable | undefined> {
    const { topic, partition, offset, value } = message;
    if (!value) return undefined;
    const event = await this.deps.codec.decode(value, { topic, partition, offset });
    let delivery: InboundDelivery;
    if (event.type === 'WebhookReceived') delivery = (event as RecordedEvent<WebhookReceived>).data;
    else if (event.type === 'InboundEventRedriven') {
      const { inboundDeadLetterId: _id, ...rest } = (event as RecordedEvent<InboundEventRedriven>).data;
      delivery = rest;
    } else return undefined;
    const kind = mappingKindOf(delivery.event);
    return kind === null ? undefined : { key: keyOf(message), envelope: event.envelope, delivery, kind };
  }

  private async mapOrDeadLetter({ envelope, delivery, kind }: Mappable, connections: Connections): Promise<void> {
    try {
      await this.map(envelope, delivery, kind, connections);
    } catch (error) {
      if (!(error instanceof Unmappable)) throw error;
      this.context.log.info(
        { inboxId: delivery.inboxId, deliveryId: delivery.deliveryId, reason: error.message },
        'inbound event dead-lettered',
      );
      await this.command(envelope, inboundDeadLetterAggregate, {
        type: 'DeadLetterInboundEvent',
        data: { inboundDeadLetterId: inboundDeadLetterIdOf(delivery.inboxId, delivery.deliveryId), ...delivery, reason: error.message },
      });
    }
  }

  private async map(owner: EventEnvelope, delivery: InboundDelivery, kind: 'created' | 'updated', connections: Connections): Promise<void> {
    const parsed = parsePlatformOrder(delivery.payload, delivery.externalId);
    if (!parsed.ok) throw new Unmappable(parsed.reason);
    const { order } = parsed;
    const { db } = this.deps;
    const scope = { tenantId: owner.tenantId, orgId: owner.orgId };
    // One read per connection per slice: its events are mostly one connection's.
    let read = connections.get(delivery.connectionId);
    if (!read) connections.set(delivery.connectionId, (read = mappingConnection(db, delivery.connectionId)));
    const connection = await read;
    if (!connection) {
      if (Date.now() - owner.occurredAt > UNKNOWN_CONNECTION_AFTER_MS)
        throw new Unmappable(`connection ${delivery.connectionId} is unknown`);
      throw new NotYet(`connection ${delivery.connectionId} is not in the read model yet`);
    }
    const matches = await matchLines(db, scope, delivery.connectionId, order.lines);
    const data = placeOrderFrom(order, {
      ...scope,
      unifiedConnectionId: delivery.unifiedConnectionId,
      provider: connection.provider,
      defaultLocationId: connection.default_location_id,
      matches,
    });
    const placed = await this.command(owner, orderAggregate, { type: 'PlaceOrder', data });
    if (placed.outcome === 'rejected') {
      // The same key with another mapped request: placed already (by the create, or by an update that came first).
      if (placed.error.kind === 'validation') throw new Unmappable(`the order rules refuse it: ${describe(placed)}`);
      if (placed.error.kind !== 'conflict') throw new NotYet(`PlaceOrder ${placed.error.kind}: ${placed.error.message}`);
    }
    if (kind !== 'updated') return;
    const status = requestedStatusOf(order.status);
    if (status === null) return;
    const orderId = mappedOrderId(owner.tenantId, owner.orgId, delivery.unifiedConnectionId, order.externalId);
    // A status request needs the order decided (confirmed or rejected by its reservation), which the pipeline does
    // asynchronously after the placement.
    const deadline = Date.now() + DECIDED_WAIT_MS;
    let current = await orderStatusOf(db, scope, orderId);
    while ((current === undefined || current === 'pending') && Date.now() < deadline && !this.context.stopping()) {
      await sleep(100);
      current = await orderStatusOf(db, scope, orderId);
    }
    if (current === undefined || current === 'pending') throw new NotYet(`order ${orderId} is not decided yet`);
    // A rejected order stays rejected (the state machine has no way out of it): the move is refused and recorded.
    const requested = await this.command(owner, orderAggregate, { type: 'RequestOrderStatus', data: { orderId, status } });
    if (requested.outcome === 'rejected') throw new NotYet(`RequestOrderStatus ${requested.error.kind}: ${requested.error.message}`);
  }

  /** Sends a command and waits for its decision: a rejection is the caller's to judge, anything else (no answer) throws. */
  private async command<C extends Command, E extends Event, S>(
    owner: Owner,
    aggregate: Aggregate<C, E, S>,
    input: CommandInput<NoInfer<C>>,
  ): Promise<Decision> {
    const scope = { tenantId: owner.tenantId, orgId: owner.orgId };
    const reply = await sendCommand(this.deps.bus, scope, aggregate, input, { correlationId: owner.correlationId, refusalThrows: false });
    if (reply.outcome === 'rejected' && aggregate.name !== orderAggregate.name)
      throw new NotYet(`${input.type} refused: ${reply.error.message}`);
    return reply;
  }
}

const keyOf = ({ topic, partition, offset }: TopicMessage): string => `${topic}/${partition}/${offset}`;

const describe = (reply: Extract<CommandReply, { outcome: 'rejected' }>): string =>
  [reply.error.message, ...reply.error.details.map((d) => `${d.path} ${d.message}`)].join('; ');

/** The order mapping: `concurrency` inbox partitions mapped side by side (each partition in order, MAPPED_AT_ONCE at a time). */
export const orderMappingWorker = (concurrency = 8): Worker =>
  defineWorker({
    name: 'order-mapping',
    component: 'order-mapping',
    source: {
      kind: 'topic',
      groupId: 'commerce-ledger.order-mapping',
      topics: [inboxAggregate.events, inboundDeadLetterAggregate.events],
      fetch: 'prompt',
      commit: { kind: 'each-slice', partitionsAtOnce: concurrency, recordsAtOnce: MAPPED_AT_ONCE },
    },
    hooks: (context) => new OrderMappingWorker(context),
  });
