import { describe, expect, it } from 'vitest';
import { kafkaConnectionError, kafkaProtocolError } from '../../ledger/kafka.ts';
import { KafkaTransaction } from '../../ledger/kafka/producer.ts';

/** A transaction whose client's send fails with `error` (the client's own transaction object, not one of ours, stands in). */
const failingWith = (error: Error) => {
  let broken = 0;
  const clientTransaction = { send: () => Promise.reject(error) };
  const transaction = new KafkaTransaction(
    {} as ConstructorParameters<typeof KafkaTransaction>[0],
    clientTransaction as unknown as ConstructorParameters<typeof KafkaTransaction>[1],
    () => broken++,
  );
  return { transaction, broken: () => broken };
};

const send = (transaction: KafkaTransaction) =>
  transaction.sendBatch({ topicMessages: [{ topic: 't', messages: [{ key: 'k', value: 'v' }] }] }).catch(() => undefined);

describe('KafkaTransaction: which failed sends cost the producer its epoch', () => {
  it.each(['CONCURRENT_TRANSACTIONS', 'NOT_COORDINATOR', 'COORDINATOR_NOT_AVAILABLE', 'COORDINATOR_LOAD_IN_PROGRESS'])(
    'keeps it when the coordinator answers %s (AddPartitionsToTxn, before any record went)',
    async (answer) => {
      const { transaction, broken } = failingWith(kafkaProtocolError(answer));
      await send(transaction);
      expect(broken()).toBe(0);
    },
  );

  it.each([
    ['a partition leader answers NOT_LEADER_OR_FOLLOWER', kafkaProtocolError('NOT_LEADER_OR_FOLLOWER')],
    ['the broker goes away mid-request', kafkaConnectionError('connect ECONNREFUSED')],
  ])('takes a new one when %s (the records may have been counted)', async (_what, error) => {
    const { transaction, broken } = failingWith(error);
    await send(transaction);
    expect(broken()).toBe(1);
  });

  it('keeps it when a newer producer fenced this one (taking the id back would fence that one)', async () => {
    const { transaction, broken } = failingWith(kafkaProtocolError('PRODUCER_FENCED'));
    await send(transaction);
    expect(broken()).toBe(0);
  });
});
