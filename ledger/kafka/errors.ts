import { GenericError, MultipleErrors, NetworkError, ProtocolError } from '@platformatic/kafka';
import { sleep } from '../sleep.ts';

/**
 * Answers a request gets while a coordinator is still busy (writing the previous commit's markers, loading, moving):
 * transient, tried again after a few milliseconds, where the client's default of a second would stall every round.
 */
export const BUSY_COORDINATOR = new Set([
  'CONCURRENT_TRANSACTIONS',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR',
]);

/** 5 ms doubling for a busy coordinator, 100 ms doubling to a second for anything else (a broker away, a leader moving). */
export const retryDelay = (_client: unknown, _operation: string, attempt: number, _retries: number, error: Error): number =>
  kafkaErrorType(error) === 'CONCURRENT_TRANSACTIONS' ? Math.min(200, 5 * 2 ** attempt) : Math.min(1_000, 100 * 2 ** (attempt - 1));

/** Whether an error comes from the Kafka client (a broker unreachable, a request refused or timed out). */
export const isKafkaError = (error: unknown): boolean => error instanceof GenericError || error instanceof MultipleErrors;

/** The error the client raises when it cannot reach a broker (for tests of what the service makes of it). */
export const kafkaConnectionError = (message: string): Error => new NetworkError(message);

/** The error the client raises when a broker answers with error `id` (`NOT_COORDINATOR`, …), for the same tests. */
export const kafkaProtocolError = (id: string): Error => new ProtocolError(id);

type Found = { apiId?: string; code?: string; errors?: unknown[]; cause?: unknown };

/** The first error of a client failure's chain (its causes, its attempts, last first) that `matches`. */
function findInChain(error: unknown, matches: (found: Found) => boolean): Found | undefined {
  const seen = new Set<unknown>();
  const search = (candidate: unknown): Found | undefined => {
    if (!candidate || typeof candidate !== 'object' || seen.has(candidate)) return undefined;
    seen.add(candidate);
    const found = candidate as Found;
    if (matches(found)) return found;
    // The last of several attempts is the one that says what the broker thinks now.
    for (const inner of [...(found.errors ?? [])].reverse()) {
      const hit = search(inner);
      if (hit) return hit;
    }
    return search(found.cause);
  };
  return search(error);
}

/** The broker's name for the error behind a failure (`NOT_COORDINATOR`, …), however deep the client wrapped it. */
export const kafkaErrorType = (error: unknown): string | undefined => findInChain(error, (found) => typeof found.apiId === 'string')?.apiId;

const COORDINATOR_AWAY = new Set(['COORDINATOR_LOAD_IN_PROGRESS', 'COORDINATOR_NOT_AVAILABLE', 'NOT_COORDINATOR']);

/** The coordinator of a group or of transactions is not there yet (being elected, loading its log, moved). */
export const isCoordinatorAway = (error: unknown): boolean => COORDINATOR_AWAY.has(String(kafkaErrorType(error)));

const FENCED = new Set(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH']);

/** A newer producer took this one's transactional id (another incarnation of the instance): it must not take it back. */
export const isProducerFenced = (error: unknown): boolean => FENCED.has(String(kafkaErrorType(error)));

/** No broker answers (refused, reset, timed out) or the coordinator is not there yet: it is worth asking again later. */
export const isBrokerAway = (error: unknown): boolean =>
  isCoordinatorAway(error) ||
  findInChain(error, (found) => found.code === 'PLT_KFK_NETWORK' || found.code === 'PLT_KFK_TIMEOUT') !== undefined;

export const isTransientTransactionError = (error: unknown): boolean => BUSY_COORDINATOR.has(String(kafkaErrorType(error)));

/**
 * Runs `step` again while it fails and `pause(attempt, error)` (attempt 0 the first failure) names how long to wait
 * first; `undefined` gives up and rethrows. Each caller says which Kafka errors pass and for how long.
 */
export async function retryKafka<T>(step: () => Promise<T>, pause: (attempt: number, error: unknown) => number | undefined): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      const ms = pause(attempt, error);
      if (ms === undefined) throw error;
      await sleep(ms);
    }
  }
}

/**
 * Retries one step of a transaction (send records, commit offsets) while the broker answers with a transient error,
 * 5 ms then doubling to 200 ms, for about 3 s in all (beyond the client's own retries).
 */
export const retryTransient = <T>(step: () => Promise<T>, onRetry: (error: unknown) => void = () => undefined): Promise<T> =>
  retryKafka(step, (attempt, error) => {
    if (!isTransientTransactionError(error) || attempt >= 20) return undefined;
    onRetry(error);
    return Math.min(200, 5 * 2 ** attempt) * (0.5 + Math.random() / 2);
  });

/** Stops clients in order, each as far as it can: a client of a broker that went away may fail to say goodbye. */
export async function disconnectQuietly(...clients: ({ disconnect: () => Promise<void> } | undefined)[]): Promise<void> {
  for (const client of clients) await client?.disconnect().catch(() => undefined);
}
