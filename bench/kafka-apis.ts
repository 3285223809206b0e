/** Kafka API keys by name, for the benches that tell a service's requests apart. */
export const KAFKA_APIS: Record<number, string> = {
  0: 'Produce',
  1: 'Fetch',
  2: 'ListOffsets',
  3: 'Metadata',
  8: 'OffsetCommit',
  9: 'OffsetFetch',
  10: 'FindCoordinator',
  11: 'JoinGroup',
  12: 'Heartbeat',
  14: 'SyncGroup',
  22: 'InitProducerId',
  24: 'AddPartitionsToTxn',
  25: 'AddOffsetsToTxn',
  26: 'EndTxn',
  28: 'TxnOffsetCommit',
};
