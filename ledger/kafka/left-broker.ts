import { NetworkError, type Broker, type Callback, type Connection } from '@platformatic/kafka';

/**
 * What every client of the port answers when asked for a connection to a broker that its cached metadata does not hold
 * (a coordinator or leader moved to a broker that was away when the metadata was taken): it forgets the metadata and
 * answers a retriable network error that does not say "stale metadata". The client then finds its coordinator again
 * (producers and group members alike drop the coordinator's node id on a network error) over fresh metadata. The plain
 * client (@platformatic/kafka 2.12.1) keeps the metadata (a producer: its list of brokers is taken again only with a
 * topic's metadata, which a producer ending a transaction never asks for) or the coordinator (a group member), and its
 * requests went on failing. Returns the broker to connect to, or undefined once it has answered.
 */
export function brokerInMetadata(
  client: { clearMetadata(): void },
  broker: Broker | undefined,
  callback: Callback<Connection>,
): Broker | undefined {
  if (broker?.host != null && broker.port != null) return broker;
  client.clearMetadata();
  callback(new NetworkError('Cannot get a connection: the broker has left the cluster metadata.', { canRetry: true }));
  return undefined;
}
