import { Consumer, kGetApi, type API, type Callback, type fetchV15 } from '@platformatic/kafka';

type FetchResponse = fetchV15.FetchResponse;
type FetchedPartition = FetchResponse['responses'][number]['partitions'][number];
type AbortedTransaction = NonNullable<FetchedPartition['abortedTransactions']>[number];
type AnyApi = ((...args: unknown[]) => void) & Record<string, unknown>;

const abortedOf = new WeakMap<FetchedPartition, AbortedTransaction[]>();

/** The aborted transactions the broker listed for a partition of a fetch response (the fetch loop skips their records). */
export const abortedTransactionsOf = (partition: FetchedPartition): AbortedTransaction[] => abortedOf.get(partition) ?? [];

/**
 * A consumer whose `fetch` hands over every record the broker sent, aborted ones included, for the fetch loop's own
 * filter (`readBatch`) to skip. The client's filter (@platformatic/kafka 2.12.1, `#filterUncommittedMessages`) drops
 * committed records: per producer it skips from its last listed aborted transaction's first offset to its last abort
 * marker in the response, so a producer that commits between an aborted transaction and a later abort marker (a
 * restart of the same transactional id aborting an open transaction that had written nothing there) loses those
 * commits. The Fetch the client is given lists no aborted transaction to it; the list is kept aside per partition.
 * Everything else of the client's fetch stays (its fetch sessions, retries and metadata refreshes).
 */
export class UnfilteredConsumer extends Consumer {
  override [kGetApi]<RequestArguments extends Array<unknown>, ResponseType>(
    name: string,
    callback: Callback<API<RequestArguments, ResponseType>>,
  ): void {
    super[kGetApi]<RequestArguments, ResponseType>(name, (error, api) => {
      if (error || name !== 'Fetch' || !api) {
        callback(error, api as API<RequestArguments, ResponseType>);
        return;
      }
      callback(null, withAbortedSetAside(api as unknown as AnyApi) as unknown as API<RequestArguments, ResponseType>);
    });
  }
}

function setAside(response: FetchResponse | undefined): void {
  for (const topic of response?.responses ?? [])
    for (const partition of topic.partitions) {
      abortedOf.set(partition, partition.abortedTransactions ?? []);
      partition.abortedTransactions = [];
    }
}

/** The Fetch API with each response's aborted transactions moved aside before the client sees them. */
function withAbortedSetAside(api: AnyApi): AnyApi {
  const wrapped = ((...args: unknown[]) => {
    const done = args.pop() as (error: unknown, response?: FetchResponse) => void;
    api(...args, (error: unknown, response?: FetchResponse) => {
      setAside(response ?? (error as { response?: FetchResponse } | undefined)?.response);
      done(error, response);
    });
  }) as AnyApi;
  return Object.assign(wrapped, { key: api.key, version: api.version });
}
