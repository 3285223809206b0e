import {
  FetchIsolationLevels,
  kGetApi,
  kGetConnection,
  type API,
  type Broker,
  type Connection,
  type Consumer as ClientConsumer,
  type fetchV15,
} from '@platformatic/kafka';

export type FetchResponse = fetchV15.FetchResponse;
type FetchRequestTopic = fetchV15.FetchRequestTopic;
type FetchArguments = Parameters<typeof fetchV15.api.async> extends [Connection, ...infer A] ? A : never;
type FetchApi = API<FetchArguments, FetchResponse>;

/** What one fetch asks of one broker: its topics by id and name, each partition from its offset. */
export type FetchRequest = {
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  topics: { id: string; name: string; partitions: FetchRequestTopic['partitions'] }[];
};

/** Before version 13, Fetch names topics instead of giving their ids. */
const LAST_VERSION_BY_NAME = 12;
/** No fetch session (KIP-227): every request is a full one and the broker keeps nothing for it. */
const NO_SESSION = { id: 0, epoch: -1 };

const callback =
  <T>(resolve: (value: T) => void, reject: (error: unknown) => void) =>
  (error: Error | null | undefined, value?: T) =>
    error ? reject(error) : resolve(value as T);

/**
 * A read_committed Fetch as the broker answers it: records up to the last stable offset, aborted transactions listed
 * and none of their records dropped (the caller skips them). The client's own `fetch` is not used because its filter
 * drops committed records (@platformatic/kafka 2.12.1, `#filterUncommittedMessages`): per producer it skips from its
 * last listed aborted transaction's first offset to its last abort marker in the response, so a producer that
 * commits between an aborted transaction and a later abort marker (a restart of the same transactional id aborting
 * an open transaction that had written nothing there) loses those commits. A failed partition rejects with the
 * response attached (`error.response`), as the client's fetch does.
 */
export async function fetchCommitted(client: ClientConsumer, broker: Broker, request: FetchRequest): Promise<FetchResponse> {
  const connection = await new Promise<Connection>((resolve, reject) => client[kGetConnection](broker, callback(resolve, reject)));
  const api = await new Promise<FetchApi>((resolve, reject) =>
    client[kGetApi]<FetchArguments, FetchResponse>('Fetch', callback(resolve, reject)),
  );
  const byName = api.version <= LAST_VERSION_BY_NAME;
  const idOf = new Map(request.topics.map(({ id, name }) => [name, id]));
  const topics = request.topics.map(({ id, name, partitions }) => ({ topicId: byName ? name : id, partitions }));
  const named = (response: FetchResponse | undefined) => {
    if (byName) for (const topic of response?.responses ?? []) topic.topicId = idOf.get(topic.topicId) ?? topic.topicId;
    return response;
  };
  try {
    const response = await new Promise<FetchResponse>((resolve, reject) =>
      api(
        connection,
        request.maxWaitMs,
        request.minBytes,
        request.maxBytes,
        FetchIsolationLevels.READ_COMMITTED,
        NO_SESSION.id,
        NO_SESSION.epoch,
        topics,
        [],
        '',
        callback(resolve, reject),
      ),
    );
    return named(response) as FetchResponse;
  } catch (error) {
    named((error as { response?: FetchResponse }).response);
    throw error;
  }
}
