import { describe, expect, it } from 'vitest';
import { isProducerFenced, kafkaConnectionError, kafkaErrorType, kafkaProtocolError, TransactionAborted } from '../../ledger/kafka.ts';
import { isRetriableRound } from '../../ledger/partition-tasks.ts';

/** Which failed rounds a transactional part reads and decides again, and which restart it. */
describe('isRetriableRound', () => {
  it.each([
    'NOT_COORDINATOR',
    'COORDINATOR_NOT_AVAILABLE',
    'COORDINATOR_LOAD_IN_PROGRESS',
    'CONCURRENT_TRANSACTIONS',
    'NOT_LEADER_OR_FOLLOWER',
    'LEADER_NOT_AVAILABLE',
    'NOT_ENOUGH_REPLICAS',
    'REQUEST_TIMED_OUT',
  ])('an aborted round the cluster refused with %s is tried again', (id) => {
    const error = new TransactionAborted(kafkaProtocolError(id));
    expect(kafkaErrorType(error)).toBe(id);
    expect(isRetriableRound(error)).toBe(true);
  });

  it('an aborted round whose broker could not be reached is tried again', () => {
    expect(isRetriableRound(new TransactionAborted(kafkaConnectionError('connect ECONNREFUSED 127.0.0.1:9092')))).toBe(true);
  });

  it.each(['NOT_COORDINATOR', 'NOT_LEADER_OR_FOLLOWER'])(
    'the same refusal with the outcome unknown (%s, not aborted) restarts the part',
    (id) => {
      expect(isRetriableRound(kafkaProtocolError(id))).toBe(false);
    },
  );

  it.each(['INVALID_PRODUCER_EPOCH', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 'INVALID_TXN_STATE'])(
    'an aborted round refused with %s (fenced, or not the cluster being busy) restarts the part',
    (id) => {
      expect(isRetriableRound(new TransactionAborted(kafkaProtocolError(id)))).toBe(false);
    },
  );

  it('an aborted round that failed on its own (a bug, not the cluster) restarts the part', () => {
    expect(isRetriableRound(new TransactionAborted(new TypeError('cannot read properties of undefined')))).toBe(false);
  });

  it('a round the group moved on from is read again, aborted or not', () => {
    expect(isRetriableRound(kafkaProtocolError('ILLEGAL_GENERATION'))).toBe(true);
    expect(isRetriableRound(new TransactionAborted(kafkaProtocolError('REBALANCE_IN_PROGRESS')))).toBe(true);
  });
});

/** A producer whose id a newer one took does not take it back (the newer incarnation would be fenced in turn). */
describe('isProducerFenced', () => {
  it.each(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH'])('%s, however deep the client wrapped it, is fenced', (id) => {
    expect(isProducerFenced(new TransactionAborted(kafkaProtocolError(id)))).toBe(true);
  });

  it.each(['NOT_LEADER_OR_FOLLOWER', 'MESSAGE_TOO_LARGE', 'OUT_OF_ORDER_SEQUENCE_NUMBER'])('%s is not', (id) => {
    expect(isProducerFenced(kafkaProtocolError(id))).toBe(false);
  });

  it('a broker that cannot be reached is not', () => {
    expect(isProducerFenced(kafkaConnectionError('connect ECONNREFUSED 127.0.0.1:9092'))).toBe(false);
  });
});
