import { describe, expect, it } from 'vitest';
import { GroupClient } from '../../ledger/kafka/group-client.ts';
import { UnfilteredConsumer } from '../../ledger/kafka/unfiltered-consumer.ts';

type Found = { code?: string; canRetry?: boolean; hasStaleMetadata?: boolean };
type AskConnection = (broker: undefined, callback: (error: Error | null) => void) => void;
// The client's own extension point, which GroupClient overrides (only the Kafka port imports the client itself).
const kGetConnection = Object.getOwnPropertySymbols(GroupClient.prototype).find((s) => s.description === 'plt.kafka.base.getConnection')!;
const options = { clientId: 'unit', bootstrapBrokers: ['127.0.0.1:1'], groupId: 'unit-group' };

/** What a client answers when asked for a connection to a broker its metadata does not hold (a coordinator gone). */
function missingBroker(client: UnfilteredConsumer): Promise<Found> {
  return new Promise((resolve) => {
    const ask = (client as unknown as Record<symbol, AskConnection>)[kGetConnection]!.bind(client);
    ask(undefined, (error) => resolve((error ?? {}) as Found));
  });
}

describe('GroupClient', () => {
  it('answers a broker gone from the metadata as a network error that has the client find its coordinator again', async () => {
    const client = new GroupClient(options);
    try {
      const error = await missingBroker(client);
      expect(error.code).toBe('PLT_KFK_NETWORK');
      expect(error.canRetry).toBe(true);
      // "Stale metadata" would have the client refresh its metadata only and keep asking the coordinator that left.
      expect(error.hasStaleMetadata).toBeUndefined();
    } finally {
      await client.close(true);
    }
  });

  it('works around what the plain client answers there (stale metadata only, the coordinator kept)', async () => {
    const client = new UnfilteredConsumer(options);
    try {
      const error = await missingBroker(client);
      expect(error.hasStaleMetadata).toBe(true);
    } finally {
      await client.close(true);
    }
  });
});
