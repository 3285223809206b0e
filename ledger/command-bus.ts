import { randomUUID } from 'node:crypto';
import type { CommandReply } from './command-reply.ts';
import { PayloadTooLargeError } from './errors.ts';
import { chunkBySize, GroupCommit, recordBytes } from './group-commit.ts';
import { kafkaErrorType, keyedProducer, retryKafka, type Kafka, type Producer, type TopicRecords } from './kafka.ts';
import { periodicallyCommitting, type PeriodicCommit } from './periodic-commit.ts';
import type { Logger } from './logger.ts';
import type { Command } from './message.ts';
import type { LedgerMetrics } from './metrics.ts';
import type { Part, PartSignals } from './supervisor.ts';
import { errorField } from './throttled-log.ts';
import { namespaced, topics, type TopicSpec } from './topics.ts';

export class CommandTimeoutError extends Error {
  readonly commandId: string;

  constructor(commandId: string) {
    super(`no decision for command ${commandId} in time`);
    this.commandId = commandId;
  }
}

type Pending = { resolve: (reply: CommandReply) => void; reject: (error: Error) => void; timer: NodeJS.Timeout };

/**
 * The edge's side of the command topics: send a command keyed by its aggregate, await the processor's reply.
 * As a supervised part it is the reader of the replies topic (where the processors of other processes answer; this
 * process's own hand their replies over, see ledger/reply-handover.ts); its producer is replaced whenever a send fails,
 * since an idempotent producer that lost track of its sequence numbers (a broker restart) never recovers by itself.
 */
export class CommandBus implements Part {
  private producer?: { client: Producer; connected: Promise<void> };
  private consumer?: { stop: () => Promise<void> };
  private commits?: PeriodicCommit;
  private positioned = false;
  private readonly pending = new Map<string, Pending>();
  private readonly repliesTopic: string;
  private readonly groupId: string;
  /** Concurrent requests' commands share one produce request rather than queueing behind each other's. */
  private readonly outbox = new GroupCommit<TopicRecords>(async (topicMessages) => {
    const producer = await this.connectedProducer();
    try {
      // One produce request stays under the record limit: a partition's records travel as one record batch.
      for (const chunk of chunkBySize(
        topicMessages,
        ({ messages }) => messages.reduce((sum, m) => sum + recordBytes(m), 0),
        this.maxRecordBytes,
      )) {
        await sendWhileLeadersMove(() => producer.sendBatch({ topicMessages: chunk }));
      }
    } catch (error) {
      this.discardProducer(producer);
      throw error;
    }
  });

  private readonly kafka: Kafka;
  private readonly namespace: string;
  private readonly timeoutMs: number;
  private readonly maxRecordBytes: number;
  private readonly log: Logger;
  private readonly signals: PartSignals;
  /** Counts and times every `send` (not `post`: nothing waits for its decision). */
  private readonly metrics?: LedgerMetrics;
  /** This process's reply address (ledger/reply-handover.ts), named in every command sent; none: replies come as records. */
  private readonly address?: string;

  constructor(
    kafka: Kafka,
    namespace: string,
    timeoutMs: number,
    maxRecordBytes: number,
    log: Logger,
    signals: PartSignals,
    metrics?: LedgerMetrics,
    address?: string,
  ) {
    this.kafka = kafka;
    this.namespace = namespace;
    this.timeoutMs = timeoutMs;
    this.maxRecordBytes = maxRecordBytes;
    this.log = log;
    this.signals = signals;
    this.metrics = metrics;
    this.address = address;

    this.repliesTopic = namespaced(namespace, topics.commandReplies.name);
    // Every edge instance reads every reply in a group of its own; a restarted reader resumes where it committed.
    this.groupId = namespaced(namespace, `commerce-ledger.edge.${randomUUID()}`);
  }

  async start(): Promise<void> {
    await this.connectedProducer();
    // Committed every few seconds, not per batch: replies read again after a restart settle nothing.
    const { consumer, commits, start } = periodicallyCommitting(
      this.kafka,
      {
        groupId: this.groupId,
        topics: [this.repliesTopic],
        fromBeginning: false,
        eachBatch: async (batch) => {
          this.deliver(batch.messages.flatMap((message) => (message.value ? [JSON.parse(message.value.toString()) as CommandReply] : [])));
        },
      },
      this.signals,
      (error) => this.log.warn({ err: errorField(error) }, 'reply offsets not committed'),
    );
    this.consumer = consumer;
    this.commits = commits;
    await start();
    if (!this.positioned) await this.awaitOwnPing();
    this.positioned = true;
  }

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    await this.commits?.stop();
    this.commits = undefined;
    await consumer?.stop().catch(() => undefined);
  }

  /** The last stop of the service: nobody waits any more, and the producer goes too. */
  async close(): Promise<void> {
    this.failAll(new Error('command bus stopped'));
    await this.stop();
    const producer = this.producer?.client;
    this.producer = undefined;
    await producer?.disconnect().catch(() => undefined);
  }

  /** Every request still waiting for a reply gets `error` now (the broker went away: it would only time out). */
  failAll(error: Error): void {
    for (const [commandId, waiter] of this.pending) {
      this.settle(commandId);
      waiter.reject(error);
    }
  }

  /** Replies heard, from the replies topic or handed over by this process's processors: each settles its waiter. */
  deliver(replies: readonly CommandReply[]): void {
    for (const reply of replies) this.settle(reply.commandId)?.resolve(reply);
  }

  /** Resolves with the processor's reply; rejects when the command could not be written, in time, or the broker went away. */
  send(topic: TopicSpec, aggregateId: string, command: Command): Promise<CommandReply> {
    const started = process.hrtime.bigint();
    const { commandId } = command.metadata;
    const reply = this.awaitReply(commandId, this.timeoutMs);
    const addressed = this.address ? { ...command, metadata: { ...command.metadata, replyTo: this.address } } : command;
    // No reply will come for a command that was never written.
    this.append(topic, aggregateId, addressed).catch((error: Error) => this.settle(commandId)?.reject(error));
    const metrics = this.metrics;
    if (!metrics) return reply;
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    reply.then(
      ({ outcome }) => metrics.command(topic.name, outcome === 'rejected' ? 'rejected' : 'accepted', seconds()),
      () => metrics.command(topic.name, 'failed', seconds()),
    );
    return reply;
  }

  /** Appends a command without waiting for its decision: the write is durable once this resolves; no reply is written. */
  post(topic: TopicSpec, aggregateId: string, command: Command): Promise<void> {
    return this.append(topic, aggregateId, { ...command, metadata: { ...command.metadata, noReply: true } });
  }

  private async append(topic: TopicSpec, aggregateId: string, command: Command): Promise<void> {
    const message = { key: aggregateId, value: JSON.stringify(command), headers: { 'command-type': command.type } };
    if (recordBytes(message) > this.maxRecordBytes) {
      throw new PayloadTooLargeError(
        `the request makes a ${command.type} command larger than the ${this.maxRecordBytes}-byte record limit`,
      );
    }
    await this.outbox.submit({ topic: namespaced(this.namespace, topic.name), messages: [message] });
  }

  private async connectedProducer(): Promise<Producer> {
    let producer = this.producer;
    if (!producer) {
      // Few retries: while the broker is away a request should fail within a second or two, not after fifteen.
      const client = keyedProducer(this.kafka, { idempotent: true, retries: 3 });
      producer = { client, connected: client.connect() };
      this.producer = producer;
      producer.connected.catch(() => this.discardProducer(client));
    }
    await producer.connected;
    return producer.client;
  }

  private discardProducer(client: Producer): void {
    if (this.producer?.client !== client) return;
    this.producer = undefined;
    client.disconnect().catch(() => undefined);
  }

  /** Stops waiting for a command's reply: the waiter, if any, is forgotten and its timer cleared. */
  private settle(commandId: string): Pending | undefined {
    const waiter = this.pending.get(commandId);
    if (!waiter) return undefined;
    this.pending.delete(commandId);
    clearTimeout(waiter.timer);
    return waiter;
  }

  private awaitReply(commandId: string, timeoutMs: number): Promise<CommandReply> {
    return new Promise<CommandReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(commandId);
        reject(new CommandTimeoutError(commandId));
      }, timeoutMs);
      this.pending.set(commandId, { resolve, reject, timer });
    });
  }

  /** A new group starts "at the end" only once it has fetched; a ping that comes back proves it has. */
  private async awaitOwnPing(): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const commandId = `ping-${randomUUID()}`;
      // Heard from the moment it is asked for: a send slower than the wait must not leave its timeout unhandled.
      const heard = this.awaitReply(commandId, 1_000).then(
        () => true,
        (error: unknown) => {
          if (error instanceof CommandTimeoutError) return false;
          throw error;
        },
      );
      const ping: CommandReply = { commandId, outcome: 'ping' };
      try {
        const producer = await this.connectedProducer();
        await producer.send({ topic: this.repliesTopic, messages: [{ key: commandId, value: JSON.stringify(ping) }] });
      } catch (error) {
        if (Date.now() >= deadline) throw error;
        this.log.debug({ err: error }, 'ping not sent yet');
        await heard; // its timeout: a pause before the next try
        continue;
      }
      if (await heard) return;
      this.log.debug('reply consumer not positioned yet');
    }
    throw new Error('the reply consumer never received its own ping');
  }
}

/**
 * A partition whose leader is moving (a broker's controlled shutdown, an election after a broker's loss) has a leader
 * again within seconds, while the rest of the cluster serves on: a command sent then waits for it, up to this long,
 * rather than answering 503. A broker that cannot be reached at all still fails the send at once.
 */
const LEADER_MOVE_PATIENCE_MS = 8_000;
const LEADER_MOVING = new Set(['NOT_LEADER_FOR_PARTITION', 'NOT_LEADER_OR_FOLLOWER', 'LEADER_NOT_AVAILABLE', 'NOT_ENOUGH_REPLICAS']);

function sendWhileLeadersMove<T>(send: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LEADER_MOVE_PATIENCE_MS;
  return retryKafka(send, (attempt, error) =>
    LEADER_MOVING.has(String(kafkaErrorType(error))) && Date.now() < deadline ? Math.min(500, 50 * (attempt + 1)) : undefined,
  );
}
