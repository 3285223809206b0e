import { kGetConnection, type Broker, type Callback, type Connection } from '@platformatic/kafka';
import { brokerInMetadata } from './left-broker.ts';
import { UnfilteredConsumer } from './unfiltered-consumer.ts';

/**
 * The client of a group member: it forgets its group coordinator once that broker has left the cluster's metadata. The
 * client (@platformatic/kafka 2.12.1, `Consumer#handleError`) answers "the broker is not available in the current cluster
 * metadata" by refreshing the metadata only, and keeps the coordinator's node id: every heartbeat, join and offset
 * commit of the group went on failing so for as long as that broker was away (a broker's restart stalled the groups it
 * coordinated, the orders among them, for 20–30 s), though another broker had taken the group over at once.
 */
export class GroupClient extends UnfilteredConsumer {
  override [kGetConnection](broker: Broker | undefined, callback: Callback<Connection>): void {
    const present = brokerInMetadata(this, broker, callback);
    if (present) super[kGetConnection](present, callback);
  }
}
