import { randomUUID } from 'node:crypto';
import { Partitioners, type Consumer, type Kafka, type Producer, type TopicMessages } from 'kafkajs';
import type { CommandReply } from './command-reply.ts';
import { PayloadTooLargeError } from './errors.ts';
import { chunkBySize, GroupCommit, recordBytes } from './group-commit.ts';
import type { Logger } from './logger.ts';
import type { Command } from './message.ts';
import { namespaced, topics, type TopicSpec } from './topics.ts';

export class CommandTimeoutError extends Error {
  constructor(readonly commandId: string) {
    super(`no decision for command ${commandId} in time`);
  }
}

type Pending = { resolve: (reply: CommandReply) => void; reject: (error: Error) => void; timer: NodeJS.Timeout };

/** The edge's side of the command topics: send a command keyed by its aggregate, await the processor's reply. */
export class CommandBus {
  private readonly producer: Producer;
  private readonly consumer: Consumer;
  private readonly pending = new Map<string, Pending>();
  private readonly repliesTopic: string;
  /** Concurrent requests' commands share one produce request rather than queueing behind each other's. */
  private readonly outbox = new GroupCommit<TopicMessages>(async (topicMessages) => {
    // One produce request stays under the record limit: a partition's records travel as one record batch.
    for (const chunk of chunkBySize(topicMessages, ({ messages }) => messages.reduce((sum, m) => sum + recordBytes(m), 0), this.maxRecordBytes)) {
      await this.producer.sendBatch({ acks: -1, topicMessages: chunk });
    }
  });

  constructor(
    private readonly kafka: Kafka,
    private readonly namespace: string,
    private readonly timeoutMs: number,
    private readonly maxRecordBytes: number,
    private readonly log: Logger,
  ) {
    this.repliesTopic = namespaced(namespace, topics.commandReplies.name);
    this.producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
    // Every edge instance reads every reply; its own group, so it starts at the end.
    this.consumer = kafka.consumer({ groupId: namespaced(namespace, `commerce-ledger.edge.${randomUUID()}`), maxWaitTimeInMs: 100 });
  }

  async start(): Promise<void> {
    await this.producer.connect();
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.repliesTopic, fromBeginning: false });
    await this.consumer.run({
      autoCommit: false,
      eachMessage: async ({ message }) => {
        if (!message.value) return;
        const reply = JSON.parse(message.value.toString()) as CommandReply;
        this.settle(reply.commandId)?.resolve(reply);
      },
    });
    await this.awaitOwnPing();
  }

  async stop(): Promise<void> {
    for (const [, waiter] of this.pending) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error('command bus stopped'));
    }
    this.pending.clear();
    await this.consumer.disconnect();
    await this.producer.disconnect();
  }

  async send(topic: TopicSpec, aggregateId: string, command: Command): Promise<CommandReply> {
    const { commandId } = command.metadata;
    const reply = this.awaitReply(commandId, this.timeoutMs);
    try {
      await this.post(topic, aggregateId, command);
    } catch (error) {
      // No reply will come for a command that was never written.
      this.settle(commandId);
      throw error;
    }
    return reply;
  }

  /** Appends a command without waiting for its decision: the write is durable once this resolves. */
  async post(topic: TopicSpec, aggregateId: string, command: Command): Promise<void> {
    const message = { key: aggregateId, value: JSON.stringify(command), headers: { 'command-type': command.type } };
    if (recordBytes(message) > this.maxRecordBytes) {
      throw new PayloadTooLargeError(`the request makes a ${command.type} command larger than the ${this.maxRecordBytes}-byte record limit`);
    }
    await this.outbox.submit({ topic: namespaced(this.namespace, topic.name), messages: [message] });
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
      const reply = this.awaitReply(commandId, 1_000);
      const ping: CommandReply = { commandId, outcome: 'ping' };
      await this.producer.send({ topic: this.repliesTopic, messages: [{ key: commandId, value: JSON.stringify(ping) }] });
      try {
        await reply;
        return;
      } catch (error) {
        if (!(error instanceof CommandTimeoutError)) throw error;
        this.log.debug('reply consumer not positioned yet');
      }
    }
    throw new Error('the reply consumer never received its own ping');
  }
}
